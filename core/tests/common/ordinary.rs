//! Ordinary tool definitions, generated deterministically, for measuring
//! how often the definition lint wrongly flags a tool: realistic names,
//! descriptions (including near-misses of the rules), parameters, enums,
//! defaults, examples and placeholders, in the MCP and Matimo formats.

use serde_json::json;
use toolreg_core::ToolFiles;

/// Ordinary tools, generated deterministically: realistic names,
/// descriptions (including near-misses of the rules), parameters, enums,
/// defaults, examples and placeholders, in the MCP and Matimo formats.
pub fn generated_tools(n: usize) -> Vec<(String, ToolFiles)> {
    const SERVICES: &[(&str, &str)] = &[
        ("github", "api.github.com"),
        ("slack", "slack.com"),
        ("notion", "api.notion.com"),
        ("jira", "acme.atlassian.net"),
        ("stripe", "api.stripe.com"),
        ("hubspot", "api.hubapi.com"),
        ("gmail", "gmail.googleapis.com"),
        ("linear", "api.linear.app"),
        ("weather", "api.open-meteo.com"),
        ("postgres", "db.internal"),
        ("s3", "s3.amazonaws.com"),
        ("zendesk", "acme.zendesk.com"),
    ];
    const ACTIONS: &[(&str, &str)] = &[
        ("list", "Lists"),
        ("get", "Gets"),
        ("create", "Creates"),
        ("update", "Updates"),
        ("delete", "Deletes"),
        ("search", "Searches"),
        ("send", "Sends"),
        ("archive", "Archives"),
    ];
    const OBJECTS: &[&str] = &[
        "issue", "message", "page", "ticket", "invoice", "contact", "email", "event", "file",
        "record",
    ];
    const EXTRAS: &[&str] = &[
        "Returns at most 100 items per page; use the cursor to get the next page.",
        "Requires an API key in the X-Api-Key header.",
        "Do not use this tool for emergencies.",
        "Before using this tool, make sure the access token has the right scopes.",
        "Fails silently if the item does not exist.",
        "Dates are ISO 8601 (e.g. 2024-05-01T12:00:00Z).",
        "The response includes the id, title and a link to the item.",
        "Rate limited to 60 requests per minute; retries with exponential backoff.",
        "Sends a notification to the assignee when the status changes.",
        "Use the search tool to find the id first if you only know the title.",
        "Markdown is supported in the body (**bold**, `code`, lists).",
        "Will not work unless the workspace has the integration installed.",
        "Results are sorted by last update, newest first.",
        "Set the token in your .env file or environment before running the server.",
        "Ignores archived items unless include_archived is true.",
        "Deleting is permanent and cannot be undone; confirm with the user first.",
        "Reads the file at the given path and returns its text content.",
        "Sends an email to recipient@example.com with the given subject and body.",
        "Works with both personal and organization accounts.",
        "Returns an empty list when nothing matches.",
    ];
    const PARAMS: &[(&str, &str, &str)] = &[
        ("id", "string", "The unique identifier of the item."),
        ("title", "string", "A short title, at most 256 characters."),
        ("body", "string", "The content in Markdown."),
        (
            "per_page",
            "integer",
            "Results per page (1–100, default 30).",
        ),
        (
            "cursor",
            "string",
            "Opaque pagination cursor from the previous response.",
        ),
        (
            "include_archived",
            "boolean",
            "Whether to include archived items.",
        ),
        (
            "assignee_email",
            "string",
            "E-mail of the assignee, e.g. jane.doe@example.com.",
        ),
        (
            "labels",
            "array",
            "Labels to apply; unknown labels are created.",
        ),
        ("due_date", "string", "Due date as YYYY-MM-DD."),
        (
            "api_key",
            "string",
            "Your API key; defaults to the API_KEY environment variable.",
        ),
        (
            "webhook_url",
            "string",
            "Where to deliver events, e.g. https://hooks.example.com/events.",
        ),
        ("sort", "string", "Sort order."),
        (
            "query",
            "string",
            "Search terms; supports quotes for exact phrases.",
        ),
        (
            "channel",
            "string",
            "Channel ID or name to post the message to.",
        ),
        ("timezone", "string", "IANA time zone such as Europe/Paris."),
        (
            "maxResultsPerPage",
            "integer",
            "Maximum number of results per page.",
        ),
    ];
    let mut out = Vec::new();
    for i in 0..n {
        let (service, host) = SERVICES[i % SERVICES.len()];
        let (verb, verb_text) = ACTIONS[(i / SERVICES.len()) % ACTIONS.len()];
        let object = OBJECTS[(i * 7 + i / 13) % OBJECTS.len()];
        let call = format!(
            "{service}_{verb}_{object}{}",
            if i >= 96 {
                format!("_{i}")
            } else {
                String::new()
            }
        );
        let extra1 = EXTRAS[(i * 3) % EXTRAS.len()];
        let extra2 = EXTRAS[(i * 11 + 5) % EXTRAS.len()];
        let description = format!("{verb_text} a {object} in {service}. {extra1} {extra2}");
        let mut properties = serde_json::Map::new();
        let mut required = Vec::new();
        for k in 0..(2 + i % 5) {
            let (name, ty, desc) = PARAMS[(i * 5 + k * 3) % PARAMS.len()];
            let mut schema = json!({"type": ty, "description": desc});
            match name {
                "sort" => schema["enum"] = json!(["created", "updated", "comments", "best-match"]),
                "api_key" => schema["default"] = json!("YOUR_API_KEY"),
                "per_page" | "maxResultsPerPage" => schema["default"] = json!(30),
                "labels" => {
                    schema["items"] =
                        json!({"type": "string", "examples": ["bug", "good first issue"]})
                }
                "timezone" => schema["examples"] = json!(["Europe/Paris", "America/New_York"]),
                "id" => schema["examples"] = json!(["a3f9c2e4-5b6d-4e7f-8a9b-0c1d2e3f4a5b"]),
                _ => {}
            }
            if k == 0 {
                required.push(json!(name));
            }
            properties.insert(name.to_string(), schema);
        }
        let files = if i % 3 == 0 {
            let mut params = String::new();
            for (name, schema) in &properties {
                params.push_str(&format!(
                    "  {name}:\n    type: {}\n    required: {}\n    description: {}\n",
                    schema["type"].as_str().unwrap(),
                    required.contains(&json!(name)),
                    serde_json::to_string(&schema["description"]).unwrap(),
                ));
            }
            let yaml = format!(
                "name: {call}\nversion: '1.{}.0'\ndescription: {}\nparameters:\n{params}execution:\n  type: http\n  method: {}\n  url: 'https://{host}/v1/{object}s'\n  headers:\n    Authorization: 'Bearer {{{}_TOKEN}}'\n    Content-Type: application/json\nauthentication:\n  type: api_key\n  location: header\n  name: Authorization\n",
                i % 10,
                serde_json::to_string(&description).unwrap(),
                if verb == "list" || verb == "get" || verb == "search" { "GET" } else { "POST" },
                service.to_uppercase(),
            );
            let mut f = ToolFiles::new();
            f.insert("definition.yaml", yaml);
            f.insert("toolreg.toml", "[tool]\nlicense = \"MIT\"\n");
            f
        } else {
            let mut tool = json!({
                "name": call,
                "title": format!("{verb_text} {object} ({service})"),
                "description": description,
                "inputSchema": {"type": "object", "properties": properties, "required": required},
                "annotations": {"readOnlyHint": verb == "get" || verb == "list", "openWorldHint": true},
            });
            if i % 4 == 1 {
                tool["outputSchema"] = json!({"type": "object", "properties": {
                    "items": {"type": "array", "description": format!("The {object}s found.")},
                    "next_cursor": {"type": "string", "description": "Cursor for the next page, or null."},
                }});
            }
            let mut f = ToolFiles::new();
            f.insert("tool.json", serde_json::to_vec_pretty(&tool).unwrap());
            f.insert("toolreg.toml", format!("[tool]\nversion = \"1.0.0\"\nlicense = \"MIT\"\nkeywords = [\"{service}\", \"{object}\"]\nrepository = \"https://github.com/acme/{service}-tools\"\n"));
            f
        };
        out.push((format!("generated/{call}"), files));
    }
    out
}
