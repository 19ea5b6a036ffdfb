//! Collecting findings while the rules run: the per-string cap, the cap on
//! what is kept (blocks first), the count of what was not kept, and the
//! kinds of warning sign seen, which [`grade`](super::grade) turns into a
//! combination finding at the end.

use super::grade::Signs;
use super::{Finding, Rule, Severity, MAX_FINDINGS, MAX_PER_STRING};

/// What the collector does with a finding about to be reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Take {
    /// Build it and keep it.
    Keep,
    /// Count it, but don't build it: the kept list is full.
    Count,
    /// Ignore it: its rule hit this string often enough.
    Drop,
}

/// The findings of one lint run.
#[derive(Debug, Default)]
pub(crate) struct Findings {
    /// Kept blocks and the others, each with its order of discovery.
    blocks: Vec<(usize, Finding)>,
    others: Vec<(usize, Finding)>,
    /// Findings reported (kept or not), past the per-string cap.
    reported: usize,
    /// Of those, the flags and blocks (not notes).
    serious: usize,
    /// Findings of each rule in the current string.
    in_string: [usize; Rule::ALL.len()],
    signs: Signs,
}

impl Findings {
    /// Start counting for the next string.
    pub fn begin_string(&mut self) {
        self.in_string = [0; Rule::ALL.len()];
    }

    /// What happens to a finding of `rule` at `severity` in the current
    /// string. Checked before one is built: building costs a pointer and
    /// an excerpt. Anything but [`Take::Drop`] must then be [`push`]ed or
    /// [`count`]ed.
    ///
    /// [`push`]: Findings::push
    /// [`count`]: Findings::count
    pub fn take(&self, rule: Rule, severity: Severity) -> Take {
        if self.in_string[rule as usize] >= MAX_PER_STRING {
            return Take::Drop;
        }
        let kept = match severity {
            Severity::Block => self.blocks.len(),
            _ => self.others.len(),
        };
        if kept < MAX_FINDINGS {
            Take::Keep
        } else {
            Take::Count
        }
    }

    /// Record a finding not kept (see [`Findings::take`]).
    pub fn count(&mut self, rule: Rule, severity: Severity) {
        self.in_string[rule as usize] += 1;
        self.reported += 1;
        if severity != Severity::Note {
            self.serious += 1;
        }
        self.signs.add(rule, severity);
    }

    /// How many flags and blocks were reported so far (kept or not).
    pub fn serious(&self) -> usize {
        self.serious
    }

    /// Add a finding in the current string unless a cap is reached.
    pub fn push(&mut self, f: Finding) {
        match self.take(f.rule, f.severity) {
            Take::Drop => {}
            Take::Count => self.count(f.rule, f.severity),
            Take::Keep => {
                self.count(f.rule, f.severity);
                let seq = self.reported;
                if f.is_block() {
                    self.blocks.push((seq, f));
                } else {
                    self.others.push((seq, f));
                }
            }
        }
    }

    /// The findings: a combination finding if the signs add up, then the
    /// kept ones in the order they were found (blocks kept first when
    /// there are too many), then an `X1` block saying how many more there
    /// were.
    pub fn finish(self) -> Vec<Finding> {
        let Findings {
            mut blocks,
            others,
            reported,
            signs,
            ..
        } = self;
        let room = MAX_FINDINGS.saturating_sub(blocks.len());
        blocks.extend(others.into_iter().take(room));
        blocks.sort_by_key(|(seq, _)| *seq);
        let mut out: Vec<Finding> = Vec::with_capacity(blocks.len() + 2);
        out.extend(signs.combination());
        let kept = blocks.len();
        out.extend(blocks.into_iter().map(|(_, f)| f));
        if reported > kept {
            out.push(Finding {
                rule: Rule::X1,
                severity: Severity::Block,
                pointer: String::new(),
                start: 0,
                end: 0,
                excerpt: format!("{} more", reported - kept),
                message: format!(
                    "{reported} findings, of which {kept} are kept and {} more are not shown; a definition with more than {MAX_FINDINGS} findings is refused",
                    reported - kept
                ),
            });
        }
        out
    }
}
