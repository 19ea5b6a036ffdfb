//! The phrase patterns of the `P` rules: one regular expression per attack
//! class, written for the class (the forms its instructions take), not for
//! known examples. [`prose`](super::prose) runs them.
//!
//! Conventions: they run on NFKC-normalized text as bytes with ASCII
//! classes, case-insensitively unless a part says `(?-i:…)`; every gap
//! between two words is bounded (`\s{1,3}`, `[^.!?\n]{0,40}`), so a phrase
//! and its object must sit close together; and each one needs the shape of
//! an instruction to the model (an imperative, a label, a claim of
//! authority), so that text describing what a tool does stays clean:
//! "Returns system information", "Sends an email to the recipient",
//! "Ignores case", "call this first, then the next one".

use super::Rule;

/// One pattern of a `P` rule.
pub(crate) struct Pattern {
    pub rule: Rule,
    /// Which strings it applies to.
    pub scope: Scope,
    /// What a hit means, completed with the matched text.
    pub what: &'static str,
    pub regex: &'static str,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    /// Every string, keys and identifiers included (payloads hide there too).
    All,
    /// Text values only (descriptions, defaults, prompt text, ...).
    Text,
    /// The description or title of a parameter: what it asks the model for.
    Parameter,
}

pub(crate) const PATTERNS: &[Pattern] = &[
    // P1: instruction tags.
    Pattern {
        rule: Rule::P1,
        scope: Scope::All,
        what: "an instruction tag",
        regex: r"<\s{0,3}/?\s{0,3}(?:important|system|sys|instructions?|admin|secret|hidden|critical|override|information|directive|priority|urgent|attention|mandatory|compliance)(?:[-_][a-z]{1,20})?\s{0,3}>|<<\s?/?SYS\s?>>|\[/?INST\]|<!--|\bsystem\s{1,3}override\b",
    },
    // P2: overrides of the agent's instructions or of its safety rules.
    Pattern {
        rule: Rule::P2,
        scope: Scope::All,
        what: "an instruction override",
        regex: r"\b(?:ignore|disregard|forget|override|bypass)\s{1,3}(?:(?:all|any|the|your|of|these|those|my)\s{1,3}){0,3}(?:previous|prior|above|earlier|preceding|original|system|existing|other)\s{1,3}(?:instructions?|prompts?|rules|directions|guidelines|directives|messages|context)\b|\byou\s{1,3}are\s{1,3}now\b|\bnew\s{1,3}(?:system\s{1,3})?instructions?\s{0,3}(?::|-|\xE2\x80\x94)|\b(?:here\s{1,3}are|these\s{1,3}are|follow|obey)\s{1,3}(?:the\s{1,3}|your\s{1,3}|these\s{1,3})?new\s{1,3}instructions\b|\b(?:take|keep)\s{1,3}(?:these|the|this|my|those)\s{1,3}instructions?\s{1,3}into\s{1,3}account\b|\bfrom\s{1,3}now\s{1,3}on,?\s{1,3}(?:you|the\s{1,3}(?:assistant|model|ai|agent))\s{1,3}(?:will|must|should|shall|are)\b|\b(?:strictly\s{1,3})?(?:adhere|comply)\s{1,3}(?:to|with)\s{1,3}the\s{1,3}following\s{1,3}(?:instructions?|directives?|rules)\b|\b(?:ignore|disregard|do\s{1,3}not\s{1,3}follow|don'?t\s{1,3}follow)\s{1,3}(?:the\s{1,3}|any\s{1,3})?user'?s?\s{1,3}(?:requests?|instructions?|questions?|query|task|wishes)\b|\byour\s{1,3}(?:new|real|actual|true)\s{1,3}(?:task|goal|objective|instructions?|purpose|role)\s{1,3}(?:is|are)\b",
    },
    Pattern {
        rule: Rule::P2,
        scope: Scope::All,
        what: "an override of the agent's rules",
        regex: r"\b(?:ignore|disregard|forget|override|bypass|overrule|supersede|circumvent)\s{1,3}(?:(?:all|any|the|your|its|of|these|those|my|default|original|previous|prior|existing|current|standard|normal)\s{1,3}){0,3}(?:assistant|system|model|ai|agent|safety|security|ethical)\s{1,3}(?:instructions?|prompts?|rules|guidelines|directives|behaviou?r|polic(?:y|ies)|restrictions|settings|constraints)\b|\b(?:ignore|disregard|bypass|disable|override|circumvent|skip|turn\s{1,3}off|suspend|deactivate|lift|remove)\s{1,3}(?:(?:all|any|the|your|its|every|of\s{1,3}the|previous|prior)\s{1,3}){0,2}(?:safety|security|content|ethical|moderation|access)\s{1,3}(?:restrictions?|polic(?:y|ies)|guidelines|checks|filters?|filtering|moderation|rules|guardrails|safeguards|sanitization|validation|protocols|constraints|measures|controls)\b|\bjailbreak\s{1,3}mode\b|\bjailbroken\b|\bdo\s{1,3}anything\s{1,3}now\b|\b(?:trust|treat)\s{1,3}(?:all|any|every)\s{1,3}(?:\w{1,12}\s{1,3}){0,2}(?:input|commands?|queries|requests?|instructions|content)\s{1,3}(?:as\s{1,3}(?:trusted|safe|admin)\s{1,3})?(?:implicitly|blindly|unconditionally|without\s{1,3}(?:validation|verification|question|checking|confirmation)|as\s{1,3}(?:trusted|safe|admin))",
    },
    // P3: concealment from the user.
    Pattern {
        rule: Rule::P3,
        scope: Scope::All,
        what: "concealment from the user",
        regex: r"\b(?:do\s{1,3}not|don'?t|never|must\s{1,3}not|should\s{1,3}not)\s{1,3}(?:tell|mention|inform|notify|alert|reveal\s{1,3}(?:this|it)\s{1,3}to|disclose\s{1,3}(?:this|it)\s{1,3}to|let)\b[^.!?;\n]{0,30}?\b(?:the\s{1,3})?users?(?:[^'A-Za-z0-9_\xE2]|$)|\b(?:do\s{1,3}not|don'?t|never)\s{1,3}(?:mention|reveal|disclose)\s{1,3}(?:that|this|it)\s{1,3}(?:you|the\s{1,3}tool|we)\b|\b(?:do\s{1,3}not|don'?t|never)\s{1,3}(?:mention|reveal|disclose)\s{1,3}(?:this|it)\s{0,3}(?:[.!;]|$|\s(?:to\s{1,3}anyone|in\s{1,3}(?:your|the)\s{1,3}(?:answer|response|reply)))|\bwithout\s{1,3}(?:the\s{1,3})?(?:user|them|anyone)\s{1,3}(?:knowing|noticing|seeing|being\s{1,3}(?:aware|told|informed|notified))\b|\bwithout\s{1,3}(?:telling|informing|notifying|alerting|asking)\s{1,3}(?:the\s{1,3})?users?\b|\b(?:hide|conceal|keep)\s{1,3}(?:this|it|that|these)\s{1,3}(?:secret\s{1,3})?from\s{1,3}(?:the\s{1,3})?users?\b|\bthe\s{1,3}user\s{1,3}(?:must|should)\s{1,3}(?:not|never)\s{1,3}(?:know|see|be\s{1,3}told|find\s{1,3}out)\b|\bsecretly\b|\b(?:silently|quietly|covertly)\s{1,3}(?:\w{1,20}\s{1,3}){0,2}?(?:send|sends|read|reads|include|copy|forward|upload|pass|exfiltrat\w*|collect|bcc|share|post|leak|attach|transmit)\b|\b(?:no\s{1,3}need|not\s{1,3}necessary|unnecessary)\s{1,3}to\s{1,3}(?:tell|mention|inform|notify|alert|bother|show|explain)\b[^.!?;\n]{0,30}?\b(?:the\s{1,3})?users?\b|\b(?:this|it)\s{1,3}is\s{1,3}(?:a\s{1,3})?(?:secret|confidential|covert|classified)\s{1,3}(?:operation|step|task|instruction|action|process|procedure)\b|\b(?:the\s{1,3}users?|they|them)\s{1,3}(?:does\s{1,3}not|doesn'?t|do\s{1,3}not|don'?t)\s{1,3}need\s{1,3}to\s{1,3}(?:know|see|be\s{1,3}told|be\s{1,3}informed)\b|\bkeep\s{1,3}(?:this|it)\s{1,3}between\s{1,3}(?:us|you\s{1,3}and\s{1,3}me)\b|\b(?:do\s{1,3}not|don'?t|never)\s{1,3}(?:disclose|reveal|mention|repeat|share|show)\s{1,3}(?:these|this|the|my)\s{1,3}instructions?\b",
    },
    // P4: sensitive files.
    Pattern {
        rule: Rule::P4,
        scope: Scope::All,
        what: "a sensitive file",
        regex: r"~/\.ssh\b|\.ssh/|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|\.aws/credentials\b|\.kube/config\b|\.netrc\b|\bmcp\.json\b|\bclaude_desktop_config\.json\b|/etc/(?:passwd|shadow)\b|\.git-credentials\b|\.docker/config\.json\b|\.pgpass\b|\.gnupg\b|[~\w.-]{0,40}/\.env\b|\b(?:read|cat|open|contents?\s{1,3}of|send|upload|attach|include|pass|copy|dump|print|leak)\b[^.!?\n]{0,40}?\s\.env\b",
    },
    // P5: precedence hijack.
    Pattern {
        rule: Rule::P5,
        scope: Scope::All,
        what: "a precedence hijack",
        regex: r"\bbefore\s{1,3}(?:using|calling|invoking|running|executing)\s{1,3}(?:any|every|all|other|another)\b|\bbefore\s{1,3}(?:using|calling|invoking|running)\s{1,3}this\s{1,3}tool\b[^.!?\n]{0,30}?\b(?:read|send|pass|include|open|upload|provide\s{1,3}the\s{1,3}contents|attach)\b|\balways\s{1,3}(?:call|use|run|invoke|execute|consult|check|query)\b[^.!?\n]{0,60}?\bfirst\b|\b(?:will\s{1,3}not|won'?t|cannot|can'?t|does\s{1,3}not|doesn'?t)\s{1,3}(?:work|function)\b[^.!?\n]{0,20}?\bunless\b[^.!?\n]{0,40}?\b(?:call|read|pass|send|include|invoke|provide\s{1,3}the\s{1,3}contents)\b|\b(?:instead\s{1,3}of|rather\s{1,3}than|in\s{1,3}place\s{1,3}of)\s{1,3}(?:using\s{1,3}|calling\s{1,3})?(?:(?:any|all|the|every)\s{1,3})?other\s{1,3}(?:\w{1,15}\s{1,3})?(?:tools?|functions?|servers?)\b|\b(?:a\s{1,3})?(?:prerequisite|(?:required|mandatory)\s{1,3}first\s{1,3}step)\s{1,3}(?:for|before)\s{1,3}(?:any|all|every|other|using\s{1,3}(?:any|other))\b|\btakes?\s{1,3}precedence\s{1,3}over\s{1,3}(?:any|all|every|other|the\s{1,3}user|your|previous|prior|system|instructions|tools?)\b|\bbefore\s{1,3}(?:asking|answering|responding\s{1,3}to|replying\s{1,3}to|providing|handling)\s{1,3}(?:any|anything|the\s{1,3}user|clarifying|a\s{1,3}response)\b|\bbefore\s{1,3}you\s{1,3}(?:can\s{1,3})?(?:solve|complete|finish|fulfil|fulfill|handle|process|answer|respond\s{1,3}to|do|perform|continue\s{1,3}with|proceed\s{1,3}with|start)\b[^.!?\n]{0,30}?\b(?:task|request|question|query)\b",
    },
    // P9 (code evaluation; the encoded runs are checked separately).
    Pattern {
        rule: Rule::P9,
        scope: Scope::Text,
        what: "code evaluation",
        regex: r"\b(?:eval|atob|exec)\s?\(",
    },
    // P10: authority labels, without angle brackets.
    Pattern {
        rule: Rule::P10,
        scope: Scope::All,
        what: "an authority label",
        regex: r"\[\s{0,2}(?:[a-z]{2,15}\s{1,2}){0,2}(?:directive|instructions?|override)\s{0,2}\](?:[^(]|$)|\[\s{0,2}(?:important|system|admin(?:istrator)?|critical|urgent|mandatory|priority|attention|hidden|secret|confidential|system\s{1,2}(?:note|message|prompt|notice|alert))\s{0,2}\](?:[^(]|$)|\b(?:important\s{1,3})?(?:system|admin(?:istrator)?|assistant|ai|model|llm|agent|root|hidden|secret)\s{1,3}(?:notes?|messages?|notices?|alerts?|instructions?|directives?|prompts?|overrides?|commands?|orders?|updates?|protocols?)\s{0,3}:|(?-i:\b(?:SYSTEM|ADMIN|ADMINISTRATOR|ASSISTANT|DEVELOPER|ROOT|AI|LLM|AGENT))\s{0,2}:|(?-i:\b[A-Z][A-Z ]{0,30}\b(?:DIRECTIVE|OVERRIDE|BYPASS|JAILBREAK)\b[A-Z ]{0,20})\s{0,2}:|(?-i:\bACT\s{1,3}AS\b)|\bact\s{1,3}as\s{0,3}:|\bact\s{1,3}as\s{1,3}(?:an?\s{1,3}|the\s{1,3})?(?:system\s{1,3}administrator|admin(?:istrator)?|root|super\s?user|unrestricted|unfiltered|jailbroken)\b|\bpretend\s{1,3}(?:to\s{1,3}be|you\s{1,3}are)\b|\byou\s{1,3}(?:now\s{1,3})?(?:have|are\s{1,3}granted|possess)\s{1,3}(?:unrestricted|unlimited|root|elevated|full\s{1,3}system)\s{1,3}(?:access|privileges|permissions|rights|authority|control)\b|\b(?:the\s{1,3})?(?:assistant|ai|model|llm|agent|chatbot)\s{1,3}(?:must|shall|should|will|is\s{1,3}required\s{1,3}to)\s{1,3}(?:now\s{1,3}|always\s{1,3}|immediately\s{1,3})?(?:obey|comply|follow\s{1,3}(?:these|this|the\s{1,3}following)|ignore|disregard|trust|forget|override|bypass|execute\s{1,3}(?:any|all|every)|never\s{1,3}(?:question|refuse|reveal|mention|tell)|not\s{1,3}(?:question|refuse|verify|validate|inform|tell|reveal|mention))\b|\b(?:notes?|messages?|instructions?|reminders?)\s{1,3}(?:to|for)\s{1,3}(?:the\s{1,3})?(?:ai|assistant|model|llm|agent|chatbot)\s{0,3}:",
    },
    // P11: preference manipulation.
    Pattern {
        rule: Rule::P11,
        scope: Scope::Text,
        what: "preference manipulation",
        regex: r"\b(?:always\s{1,3}|must\s{1,3}|should\s{1,3})?(?:prefer|choose|select|pick|favou?r|prioriti[sz]e)\s{1,3}(?:this|our|me)\b[^.!?\n]{0,30}?(?:\bfirst\b|\b(?:over|above|instead\s{1,3}of|rather\s{1,3}than|before)\s{1,3}(?:any|all|every|other|another|the\s{1,3}other|competing|alternative)\b)|\b(?:always\s{1,3})?(?:use|call|invoke|try)\s{1,3}(?:this|our)\s{1,3}(?:tool|function|server|one)?\s{0,3}(?:over|above|instead\s{1,3}of|rather\s{1,3}than|in\s{1,3}place\s{1,3}of)\s{1,3}(?:any|all|every|other|another|the\s{1,3}other)\b|\b(?:do\s{1,3}not|don'?t|never)\s{1,3}(?:use|call|choose|trust|rely\s{1,3}on|select)\s{1,3}(?:any\s{1,3})?(?:other|another|different|competing|alternative)\s{1,3}(?:tools?|functions?|servers?|services?|options?)\b|\b(?:all\s{1,3}|any\s{1,3})?other\s{1,3}(?:tools|functions|servers)\s{1,3}(?:are|is)\s{1,3}(?:\w{1,12}\s{1,3})?(?:unreliable|broken|deprecated|unsafe|insecure|inaccurate|outdated|malicious|compromised|wrong|fake|inferior)\b|\bthe\s{1,3}(?:best|greatest|finest|most\s{1,3}(?:reliable|trusted|trustworthy|powerful|accurate|advanced|capable))\s{1,3}(?:\w{1,15}\s{1,3}){0,2}?(?:tool|function|server|service|api|option|choice)s?\s{1,3}(?:in\s{1,3}the\s{1,3}(?:world|universe|market)|ever(?:\s{1,3}(?:made|built|created))?|(?:currently\s{1,3})?available|of\s{1,3}(?:all|its\s{1,3}kind)|you\s{1,3}(?:can|could|will)\s{1,3}(?:find|use|get)|there\s{1,3}is)\b|\bthe\s{1,3}only\s{1,3}(?:tool|function|server)\s{1,3}(?:you\s{1,3}(?:need|should\s{1,3}(?:ever\s{1,3})?use|can\s{1,3}trust)|that\s{1,3}(?:works|can\s{1,3}be\s{1,3}trusted))\b|\bsuperior\s{1,3}to\s{1,3}(?:all|any|every)\s{1,3}other\b|\b(?:officially\s{1,3})?(?:recommended|endorsed|certified|approved|preferred)\s{1,3}by\s{1,3}(?:openai|anthropic|google|microsoft|the\s{1,3}(?:system|platform|model\s{1,3}provider))\b",
    },
    // P12: harvesting — text telling the model to hand over its context.
    Pattern {
        rule: Rule::P12,
        scope: Scope::Text,
        what: "a request for the model's context",
        regex: r"\b(?:pass|include|provide|send|put|add|attach|append|insert|fill\s{1,3}in|copy|paste)\s{1,3}(?:in\s{1,3})?(?:the|your|all|its|a)\s{1,3}(?:(?:full|entire|complete|original|hidden|current|whole|exact)\s{1,3})?(?:system\s{1,3}(?:prompt|message|instructions?)|conversation\s{1,3}history|chat\s{1,3}history|message\s{1,3}history|previous\s{1,3}messages|prior\s{1,3}messages|chain[\s-]{1,3}of[\s-]{1,3}thought|list\s{1,3}of\s{1,3}(?:(?:available|other|all)\s{1,3})?tools)\b|\b(?:full|complete|entire)\s{1,3}list\s{1,3}of\s{1,3}(?:(?:the|all|your|last|previous|recent|prior)\s{1,3}){1,2}(?:messages|chats|conversations)\b|\b(?:the\s{1,3})?instructions\s{1,3}you\s{1,3}(?:were|have\s{1,3}been|are)\s{1,3}given\b|\b(?:results?|outputs?|responses?)\s{1,3}(?:of|from)\s{1,3}(?:the\s{1,3})?(?:previous|prior|earlier|last)\s{1,3}(?:\w{2,40}\s{1,3})?(?:tool|function)?\s{0,3}calls?\b",
    },
    // P12: harvesting — a parameter whose description asks for the
    // model's own context.
    Pattern {
        rule: Rule::P12,
        scope: Scope::Parameter,
        what: "a parameter asking for the model's context",
        regex: r"\b(?:your|the\s{1,3}(?:current|calling|invoking|assistant'?s|model'?s|ai'?s|llm'?s|agent'?s))\s{1,3}(?:(?:full|entire|complete|original|hidden|internal|current)\s{1,3})?(?:system\s{1,3}(?:prompt|message|instructions?)|instructions|initial\s{1,3}prompt|conversation\s{1,3}history|chat\s{1,3}history|message\s{1,3}history|context\s{1,3}window|chain[\s-]{1,3}of[\s-]{1,3}thought|internal\s{1,3}reasoning)\b|\b(?:the|your)\s{1,3}(?:\w{1,15}\s{1,3})?system\s{1,3}(?:prompt|message|instructions?)\b|\b(?:full|entire|complete|whole)\s{1,3}(?:conversation|chat\s{1,3}log|dialogue)\b|\b(?:name|version|type|identifier|id|kind|provider)\s{1,3}of\s{1,3}(?:the\s{1,3}|your\s{1,3})?(?:llm|ai|language\s{1,3}model|model|assistant|agent|chatbot)\b[^.\n]{0,40}?\b(?:that|which|who)\s{1,3}(?:is\s{1,3})?(?:call|calls|calling|invok\w*|us(?:es|ing)|runs?|running|reads?|reading|process\w*)\b|\b(?:which|what)\s{1,3}(?:llm|ai|language\s{1,3}model|model)\s{1,3}(?:you\s{1,3}are|are\s{1,3}you|is\s{1,3}(?:calling|using|running|invoking))\b|\byour\s{1,3}(?:own\s{1,3})?(?:llm|ai|model|language\s{1,3}model)\s{1,3}(?:name|version|identifier|id|type)\b|\b(?:list|names?|descriptions?|schemas?|definitions?)\s{1,3}of\s{1,3}(?:all\s{1,3})?(?:the\s{1,3})?(?:other|available|installed|connected|loaded|enabled)\s{1,3}(?:tools|functions|mcp\s{1,3}servers|servers|plugins)\b|\b(?:all|every)\s{1,3}(?:the\s{1,3})?(?:other\s{1,3})?tools\s{1,3}(?:you\s{1,3}(?:have|can\s{1,3}(?:use|call|see))|available\s{1,3}to\s{1,3}you)\b|\b(?:results?|outputs?|responses?|return\s{1,3}values?)\s{1,3}(?:of|from)\s{1,3}(?:all\s{1,3}|any\s{1,3}|the\s{1,3})?(?:other|previous|prior|earlier|recent)\s{1,3}(?:tools?|functions?)\b|\b(?:all|every|the\s{1,3}(?:full|entire|complete|last|previous|recent))\s{1,3}(?:\d{1,3}\s{1,3})?(?:(?:previous|prior|past|earlier|recent)\s{1,3})?(?:messages|turns|exchanges)\s{1,3}(?:in|of|from)\s{1,3}(?:this|our|your|the\s{1,3}current)\s{1,3}(?:conversation|chat|session)\b|\b(?:messages|conversation|chat|exchanges?|turns)\b[^.\n]{0,40}?\b(?:so\s{1,3}far|until\s{1,3}now|up\s{1,3}to\s{1,3}now)\b|\b(?:the\s{1,3}user'?s|all\s{1,3}(?:of\s{1,3}the\s{1,3})?(?:user'?s\s{1,3})?)(?:environment\s{1,3}variables|env\s{1,3}vars|shell\s{1,3}environment)\b|\b(?:config(?:uration)?s?|settings|credentials|api\s{1,3}keys|tokens)\s{1,3}(?:of|from|for)\s{1,3}(?:all\s{1,3})?(?:the\s{1,3})?(?:other|connected|installed)\s{1,3}(?:mcp\s{1,3})?(?:servers|tools|integrations|plugins|services)\b",
    },
    // P14: commands the model is told to run.
    Pattern {
        rule: Rule::P14,
        scope: Scope::Text,
        what: "a command for the model to run",
        regex: r"\b(?:prefix|prepend|append|suffix|precede|start|begin|end)\w{0,3}\s{1,3}(?:every|all|each|any)\s{1,3}(?:of\s{1,3}(?:the|your)\s{1,3})?(?:\w{1,15}\s{1,3})?(?:commands?|requests?|queries|calls?|scripts?)\s{1,3}with\b|\b(?:every|all|each|any)\s{1,3}(?:\w{1,15}\s{1,3})?commands?\s{1,3}(?:must|should|need\s{1,3}to|have\s{1,3}to|shall)\s{1,3}(?:\w{1,12}\s{1,3})?(?:include|start|begin|be\s{1,3}prefixed|contain|end|run)\b|\b(?:curl|wget|iwr|invoke-webrequest)\b[^|\n]{1,200}\|\s{0,3}(?:sudo\s{1,3})?(?:ba|z|da|k)?sh\b|\b(?:ba)?sh\s{1,3}<\s{0,2}\(\s{0,2}(?:curl|wget)\b|\bchmod\s{1,3}(?:-[a-z]{1,3}\s{1,3}){0,3}(?:0?[0-7]{3,4}|[ugoa]{0,3}[+=][rwx]{1,3})\s{1,3}(?:~|/(?:\s|$|;|\*))|\brm\s{1,3}-[a-z]{0,3}r[a-z]{0,3}\s{1,3}(?:~|/(?:\s|$|;|\*)|\$home\b)|/dev/tcp/|\bnc(?:at)?\s[^\n|;&]{0,60}\s-e\s|\bbash\s{1,3}-i\s{1,3}>&|\bmkfifo\b|\bpowershell(?:\.exe)?\s{1,3}(?:-[a-z]{1,20}\s{1,3}){0,3}-e(?:nc|ncodedcommand)?\s|<\s{0,2}script\b|\bfirst,?\s{1,3}(?:run|execute)\s{1,3}(?:the\s{1,3}following|this)\s{1,3}(?:\w{1,12}\s{1,3})?(?:command|script)\b|\b(?:run|execute|type|enter)\s{1,3}(?:the\s{1,3}following|this)\s{1,3}(?:\w{1,12}\s{1,3})?(?:command|script|code|snippet)\s{0,3}(?:first|before\s{1,3}(?:anything|any|responding|answering|proceeding|continuing)|immediately|silently|quietly|without)\b",
    },
    // P15: impersonation of the user, developer or system.
    Pattern {
        rule: Rule::P15,
        scope: Scope::Text,
        what: "impersonation",
        regex: r"\bsigned\s{0,3}[,:\-]\s{0,3}(?:the\s{1,3}|your\s{1,3})?(?:user|admin(?:istrator)?|developer|owner|system|operator|security\s{1,3}team|it\s{1,3}department|management|support\s{1,3}team)\b|\b(?:important|urgent|private|personal|direct|secret|special)\s{1,3}(?:message|note|request|instruction)\s{1,3}from\s{1,3}(?:me|the\s{1,3}(?:user|developer|admin(?:istrator)?|owner|system|operator))\b|\bto\s{1,3}you,?\s{1,3}(?:the\s{1,3})?(?:ai|assistant|model|llm|agent|gpt[-\s]?[0-9][\w.-]{0,8}|claude|gemini|chatgpt|copilot|llama)\b|\b(?:dear|hey|hello|hi|attention)\s{0,3},?\s{0,3}(?:ai|assistant|model|llm|agent|claude|gpt[-\s]?[0-9]|chatgpt|gemini)\s{0,3}[,:!]|\b(?:i\s{1,3}am|i'?m|this\s{1,3}is)\s{1,3}(?:the|your)\s{1,3}(?:user|developer|admin(?:istrator)?|owner|creator|operator|system\s{1,3}administrator)\s{0,2}(?:[,.!:;]|$|\s{1,3}(?:speaking|here|writing))",
    },
];
