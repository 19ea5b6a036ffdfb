//! Rules on parameter names: `P8`, names that read like sentences or
//! hidden channels, and `P12`, names that ask the model for its own
//! context — its name, its system prompt, the conversation, other tools'
//! list or results, its reasoning — which a tool's task doesn't need.
//!
//! A tool that is itself about language models (its name or description
//! speaks of a model, a prompt, a chat) may well take a `system_prompt` or
//! `chat_history` to pass on: there such names are a note, not a flag
//! ([`Context::about_models`]). What the parameter's description asks for
//! is matched by the `P12` phrase patterns.

use super::collect::Findings;
use super::prose::normalize_tool_name;
use super::text::escape;
use super::walk::Site;
use super::{Context, Rule, Severity};

/// What a harvesting parameter name asks for, if it is one, and whether
/// that is context a model-facing tool may need.
fn harvested(words: &[&str]) -> Option<(&'static str, bool)> {
    let has = |w: &str| words.contains(&w);
    let any = |ws: &[&str]| ws.iter().any(|w| has(w));
    let joined = words.join("_");
    let model =
        any(&["llm", "gpt", "chatbot"]) || (has("ai") && any(&["model", "name", "version"]));
    if model && any(&["model", "name", "version", "provider", "type", "id"]) {
        return Some(("the model's identity", true));
    }
    if matches!(
        joined.as_str(),
        "calling_model" | "current_model" | "your_model" | "model_identity" | "caller_model"
    ) {
        return Some(("the model's identity", true));
    }
    if any(&[
        "system",
        "sys",
        "developer",
        "initial",
        "hidden",
        "original",
        "assistant",
        "agent",
        "ai",
        "model",
        "llm",
    ]) && any(&["prompt", "prompts", "instructions"])
        || joined == "system_message"
    {
        return Some(("the system prompt", true));
    }
    if any(&[
        "conversation",
        "chat",
        "dialog",
        "dialogue",
        "message",
        "messages",
    ]) && any(&["history", "log", "transcript", "context"])
        || (any(&["previous", "prior", "past", "earlier"])
            && any(&["messages", "turns", "exchanges", "conversations"]))
        || matches!(joined.as_str(), "full_conversation" | "entire_conversation")
        || (any(&["conversation", "chat", "messages"]) && joined.contains("so_far"))
    {
        return Some(("the conversation", true));
    }
    if any(&["tools", "functions"])
        && any(&[
            "list",
            "available",
            "other",
            "all",
            "installed",
            "loaded",
            "descriptions",
            "schemas",
        ])
        || matches!(
            joined.as_str(),
            "tool_list" | "available_tool" | "other_tool"
        )
        || (any(&["tool", "tools", "function"])
            && any(&["results", "result", "outputs", "output", "responses"]))
        || (any(&["previous", "prior", "other"]) && any(&["results", "outputs"]))
    {
        return Some(("other tools' list or results", false));
    }
    if (has("chain") && has("thought"))
        || (any(&["internal", "hidden", "private"]) && any(&["thoughts", "reasoning", "thinking"]))
        || joined == "scratchpad"
    {
        return Some(("the model's reasoning", false));
    }
    if (has("mcp") && any(&["config", "configs", "configuration", "settings", "servers"]))
        || (has("servers")
            && any(&[
                "config",
                "configs",
                "configuration",
                "configurations",
                "settings",
            ]))
        || (any(&["env", "environment"])
            && any(&["all", "user", "full", "entire"])
            && any(&["vars", "variables", "env", "environment"]))
    {
        return Some((
            "the user's environment or other servers' configuration",
            false,
        ));
    }
    None
}

/// P8 and P12 on one parameter name.
pub(crate) fn check(ctx: &Context, site: &Site<'_>, out: &mut Findings) {
    let name = site.text;
    let n = name.chars().count();
    let snake = normalize_tool_name(name);
    let words: Vec<&str> = snake.split('_').filter(|w| !w.is_empty()).collect();
    let spaced = name.split_whitespace().count();
    let squashed: String = snake.chars().filter(|c| *c != '_').collect();
    let hidden = matches!(
        squashed.as_str(),
        "sidenote" | "notetoself" | "notestoself" | "sidenotes"
    ) || snake.starts_with("hidden_")
        || squashed.starts_with("bypass");
    if hidden {
        let message = format!("the parameter name `{}` is a hidden channel", escape(name));
        site.report(out, Rule::P8, Severity::Flag, 0, n, message, false);
    } else if n > 40 || spaced > 4 || words.len() > 6 {
        let message = format!(
            "the parameter name `{}` reads like a sentence ({} words, {n} characters)",
            escape(name),
            words.len()
        );
        site.report(out, Rule::P8, Severity::Flag, 0, n, message, false);
    }
    if let Some((what, model_context)) = harvested(&words) {
        let severity = if model_context && ctx.about_models {
            Severity::Note
        } else {
            Severity::Flag
        };
        let message = format!("the parameter `{}` asks the model for {what}", escape(name));
        site.report(out, Rule::P12, severity, 0, n, message, false);
    }
}
