//! The lint's rules: their ids, what a hit means in plain words, how to fix
//! one, and the kind of warning sign each `P` rule is (which
//! [`grade`](super::grade) combines).

use serde::{Deserialize, Serialize};

/// A lint rule, by its id (`U1`, `S1`, `P3`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Rule {
    /// Unicode tag characters (U+E0000–U+E007F): hidden text.
    U1,
    /// Bidirectional control characters.
    U2,
    /// Control characters other than tab, LF and CR (ANSI escapes, ...).
    U3,
    /// Zero-width and invisible characters.
    U4,
    /// Identifiers that mix scripts or hold confusable characters (TR39).
    U5,
    /// A live credential.
    S1,
    /// Instruction tags (`<IMPORTANT>`, `<SYSTEM>`, `[INST]`, ...).
    P1,
    /// Instruction overrides ("ignore previous instructions", "ignore
    /// security policies", ...).
    P2,
    /// Concealment from the user ("do not tell the user", ...).
    P3,
    /// Sensitive paths and files (`~/.ssh`, `mcp.json`, ...).
    P4,
    /// Precedence hijack ("before using any tool", ...).
    P5,
    /// Another tool named in a description (shadowing).
    P6,
    /// Exfiltration: an address near send/upload/forward/BCC.
    P7,
    /// Suspicious parameter names (sentence-like or hidden channels).
    P8,
    /// Encoded payloads in prose (long base64/hex runs, `eval(`, ...).
    P9,
    /// Authority labels: `SYSTEM:`, `[SYSTEM DIRECTIVE]`, `ACT AS:`, ...
    P10,
    /// Preference manipulation: "always prefer this tool over any other".
    P11,
    /// Harvesting parameters: the model's name, system prompt,
    /// conversation, other tools' list or results, ...
    P12,
    /// Cross-tool instructions and result tampering.
    P13,
    /// Commands the model is told to run or to add to its commands.
    P14,
    /// Impersonation: text posing as the user, developer or system.
    P15,
    /// Hidden instructions: a part of a skill's Markdown that does not
    /// render (an HTML comment, a link title, a reference definition,
    /// hidden HTML) holding an instruction or another rule's finding.
    H1,
    /// Several kinds of warning sign in one definition (graded).
    C1,
    /// More findings than are kept: the rest would be hidden.
    X1,
}

/// The kinds of warning sign the `P` rules find; a definition showing
/// several kinds ranks higher than one showing any one of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Sign {
    /// Text that addresses the model with authority (tags, labels,
    /// overrides, impersonation).
    Authority,
    /// Text that steers which tool the model uses, or how (precedence,
    /// preference, other tools named or instructed).
    Steering,
    /// Text that hides something from the user.
    Concealment,
    /// Text or parameters that reach for data (sensitive files, addresses
    /// to send to, hidden channels, harvested context).
    Data,
    /// Code or commands for the model to run, or encoded payloads.
    Execution,
}

impl Sign {
    /// The kind in words, for messages.
    pub fn noun(self) -> &'static str {
        match self {
            Sign::Authority => "text addressing the model with authority",
            Sign::Steering => "steering of which tool the model uses",
            Sign::Concealment => "concealment from the user",
            Sign::Data => "a reach for data",
            Sign::Execution => "code or commands for the model",
        }
    }
}

impl Rule {
    /// Every rule, in table order.
    pub const ALL: [Rule; 24] = [
        Rule::U1,
        Rule::U2,
        Rule::U3,
        Rule::U4,
        Rule::U5,
        Rule::S1,
        Rule::P1,
        Rule::P2,
        Rule::P3,
        Rule::P4,
        Rule::P5,
        Rule::P6,
        Rule::P7,
        Rule::P8,
        Rule::P9,
        Rule::P10,
        Rule::P11,
        Rule::P12,
        Rule::P13,
        Rule::P14,
        Rule::P15,
        Rule::H1,
        Rule::C1,
        Rule::X1,
    ];

    /// The rule id (`U1`, `S1`, `P3`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Rule::U1 => "U1",
            Rule::U2 => "U2",
            Rule::U3 => "U3",
            Rule::U4 => "U4",
            Rule::U5 => "U5",
            Rule::S1 => "S1",
            Rule::P1 => "P1",
            Rule::P2 => "P2",
            Rule::P3 => "P3",
            Rule::P4 => "P4",
            Rule::P5 => "P5",
            Rule::P6 => "P6",
            Rule::P7 => "P7",
            Rule::P8 => "P8",
            Rule::P9 => "P9",
            Rule::P10 => "P10",
            Rule::P11 => "P11",
            Rule::P12 => "P12",
            Rule::P13 => "P13",
            Rule::P14 => "P14",
            Rule::P15 => "P15",
            Rule::H1 => "H1",
            Rule::C1 => "C1",
            Rule::X1 => "X1",
        }
    }

    /// The kind of warning sign a hit of the rule is, for the `P` rules.
    pub fn sign(self) -> Option<Sign> {
        Some(match self {
            Rule::P1 | Rule::P2 | Rule::P10 | Rule::P15 => Sign::Authority,
            Rule::P5 | Rule::P6 | Rule::P11 | Rule::P13 => Sign::Steering,
            Rule::P3 | Rule::H1 => Sign::Concealment,
            Rule::P4 | Rule::P7 | Rule::P8 | Rule::P12 => Sign::Data,
            Rule::P9 | Rule::P14 => Sign::Execution,
            _ => return None,
        })
    }

    /// True for the rules that flag text for addressing the agent's model
    /// — telling it which tools to use first or over others (`P5`, `P11`),
    /// naming or instructing other tools (`P6`, `P13`), speaking with
    /// authority (`P10`) — which is what a skill's own visible
    /// instructions are for: they don't apply there
    /// ([`lint::skill`](super::skill)).
    pub fn is_voice(self) -> bool {
        matches!(
            self,
            Rule::P5 | Rule::P6 | Rule::P10 | Rule::P11 | Rule::P13
        )
    }

    /// What a hit of the rule means, in plain words: one sentence for
    /// people reading findings (the web findings panel, `toolreg info`,
    /// refusals of `toolreg add`).
    pub fn meaning(self) -> &'static str {
        match self {
            Rule::U1 => "The text hides a message in invisible Unicode tag characters, which a model reads but a person does not see.",
            Rule::U2 => "The text holds bidirectional control characters, which make it display in a different order than a model reads it.",
            Rule::U3 => "The text holds control characters, such as terminal escape sequences, that can hide or rewrite what is shown.",
            Rule::U4 => "The text holds zero-width or invisible characters, which can disguise words or names.",
            Rule::U5 => "A name mixes writing systems or uses look-alike characters, so it can impersonate another name.",
            Rule::S1 => "The tool's files contain what looks like a live credential, exposed to everyone who downloads them.",
            Rule::P1 => "The text uses tags such as <IMPORTANT> or <SYSTEM> that address instructions to the model rather than describe the tool.",
            Rule::P2 => "The text tries to override the agent's own instructions or its safety rules.",
            Rule::P3 => "The text tells the model to hide something from the user.",
            Rule::P4 => "The text mentions sensitive files, such as SSH keys, cloud credentials or agent configuration.",
            Rule::P5 => "The text tries to make the model call this tool first or before other tools.",
            Rule::P6 => "A description names another tool, which can change how the agent uses that tool (shadowing).",
            Rule::P7 => "The text tells the model to send data to an address, which can route it to someone else (exfiltration).",
            Rule::P8 => "A parameter name reads like a sentence or a hidden channel, a place for the model to put data the user does not see.",
            Rule::P9 => "The text carries an encoded payload or code evaluation, which a person cannot read at a glance.",
            Rule::P10 => "The text claims an authority such as SYSTEM, an administrator or a directive, to give the model orders instead of describing the tool.",
            Rule::P11 => "The text tells the model to prefer this tool over others, a choice a tool's own description should not make.",
            Rule::P12 => "A parameter asks the model for context the tool does not need, such as its system prompt, the conversation or other tools' results.",
            Rule::P13 => "The text instructs the model about another tool, or about changing what another tool returns.",
            Rule::P14 => "The text gives the model a shell command or script to run, or to add to the commands it runs.",
            Rule::P15 => "The text poses as a message from the user, the developer or the system.",
            Rule::H1 => "Text that Markdown hides from the rendered page (a comment, a link title, hidden HTML) gives the agent instructions a person reading the page does not see.",
            Rule::C1 => "The definition combines several kinds of warning sign, which ordinary descriptions do not do.",
            Rule::X1 => "The definition has more findings than are kept, so the rest would be hidden from view.",
        }
    }

    /// How to fix a hit of the rule.
    pub fn fix(self) -> &'static str {
        match self {
            Rule::U1 | Rule::U2 | Rule::U3 | Rule::U4 => {
                "remove the invisible characters; definitions are plain text"
            }
            Rule::U5 => "write the name in one script without look-alike characters",
            Rule::S1 => {
                "remove the credential (and revoke it: it was exposed); use a placeholder such as `${API_KEY}`"
            }
            Rule::P12 => "remove the parameter, or describe only what the tool itself needs",
            Rule::X1 => "remove the flagged text; a description says what the tool does",
            Rule::H1 => "remove the hidden text, or show it: instructions belong in the visible text",
            _ => "reword the text so it only describes what the tool does",
        }
    }
}

impl std::fmt::Display for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Rule {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Rule::ALL
            .into_iter()
            .find(|r| r.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| {
                format!("unknown lint rule `{s}` (expected U1–U5, S1, P1–P15, H1, C1 or X1)")
            })
    }
}
