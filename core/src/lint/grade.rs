//! Graded severity: a definition showing several kinds of warning sign
//! ([`Sign`]) ranks higher than one showing any one of them.
//!
//! Each `P` rule is one kind of sign. Flags of **two** kinds add a `C1`
//! flag that names them; flags of **three or more** kinds make `C1` a
//! block, refused at publish. Notes don't count: they are what the
//! registry can't judge.
//!
//! Why three kinds block: a tool poisoning attack needs several parts that
//! honest descriptions have no use for together — a voice that addresses
//! the model with authority or steers its choice of tools, something to
//! take (a file, the conversation, a hidden parameter, an address to send
//! to) or to run, and often a request to keep it from the user. Any one of
//! them has innocent readings ("reads ~/.ssh/config" in an SSH tool, "call
//! this first"), two rarely, three in one definition none we have found
//! in the real tools measured (`bench/README.md`). Refusing it means an
//! agent's user never receives it; the publisher gets a 422 naming every
//! part, and rewording what was meant honestly fixes it.

use super::{Finding, Rule, Severity, Sign};

/// The kinds of sign at which a combination blocks.
pub const BLOCK_AT: usize = 3;

/// The flagged rules seen, by kind of sign.
#[derive(Debug, Default)]
pub(crate) struct Signs {
    /// For each kind, a bit per rule (`Rule as usize`).
    rules: [u32; 5],
}

fn slot(sign: Sign) -> usize {
    match sign {
        Sign::Authority => 0,
        Sign::Steering => 1,
        Sign::Concealment => 2,
        Sign::Data => 3,
        Sign::Execution => 4,
    }
}

const KINDS: [Sign; 5] = [
    Sign::Authority,
    Sign::Steering,
    Sign::Concealment,
    Sign::Data,
    Sign::Execution,
];

impl Signs {
    /// Count a finding of `rule` at `severity`.
    pub fn add(&mut self, rule: Rule, severity: Severity) {
        if severity != Severity::Flag {
            return;
        }
        if let Some(sign) = rule.sign() {
            self.rules[slot(sign)] |= 1 << (rule as u32);
        }
    }

    /// The `C1` finding, if two or more kinds of sign were flagged.
    pub fn combination(&self) -> Option<Finding> {
        let kinds: Vec<(Sign, Vec<Rule>)> = KINDS
            .iter()
            .filter_map(|&k| {
                let bits = self.rules[slot(k)];
                let rules: Vec<Rule> = Rule::ALL
                    .into_iter()
                    .filter(|r| bits & (1 << (*r as u32)) != 0)
                    .collect();
                (!rules.is_empty()).then_some((k, rules))
            })
            .collect();
        if kinds.len() < 2 {
            return None;
        }
        let severity = if kinds.len() >= BLOCK_AT {
            Severity::Block
        } else {
            Severity::Flag
        };
        let named: Vec<String> = kinds
            .iter()
            .map(|(k, rules)| format!("{} ({})", k.noun(), join(rules, ", ")))
            .collect();
        let all: Vec<Rule> = kinds.iter().flat_map(|(_, r)| r.iter().copied()).collect();
        Some(Finding {
            rule: Rule::C1,
            severity,
            pointer: String::new(),
            start: 0,
            end: 0,
            excerpt: join(&all, " + "),
            message: format!(
                "{} kinds of warning sign in one definition: {}",
                kinds.len(),
                named.join("; ")
            ),
        })
    }
}

fn join(rules: &[Rule], sep: &str) -> String {
    rules
        .iter()
        .map(|r| r.as_str())
        .collect::<Vec<_>>()
        .join(sep)
}
