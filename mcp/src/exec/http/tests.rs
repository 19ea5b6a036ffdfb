//! Unit tests of the http executor's plans: templates, headers, limits.

use super::*;

#[test]
fn templates_that_let_a_value_choose_the_host_or_scheme_are_not_served() {
    assert!(check_template("https://api.example.com/repos/{owner}/{repo}").is_ok());
    for (url, why) in [
        ("https://{tenant}.example.com/x", "in its scheme or host"),
        ("{BASE_URL}/x", "not an absolute"),
        ("http://example.com:{port}/x", "in its scheme or host"),
        ("file:///etc/{name}", "only http and https"),
        ("ftp://example.com/{name}", "only http and https"),
    ] {
        let err = check_template(url).unwrap_err();
        assert!(err.contains(why), "{url}: {err}");
    }
    let (origin, segments, query) = check_template("https://h.example:8443/a/{b}/c?x=1").unwrap();
    assert_eq!(
        origin,
        ("https".into(), Some("h.example".into()), Some(8443))
    );
    assert_eq!((segments, query), (3, true));
}

fn plan(auth: &str, headers: &str) -> HttpPlan {
    let mut files = toolreg_core::ToolFiles::new();
    files.insert(
        "definition.yaml",
        format!("name: get_it\nversion: '1.0.0'\ndescription: Get it.\nparameters:\n  q:\n    type: string\n    required: false\n    description: Unused.\nexecution:\n  type: http\n  method: GET\n  url: 'https://api.example.com/x'\n{headers}authentication:\n{auth}"),
    );
    HttpPlan::new(&toolreg_core::load(&files).unwrap().tool).unwrap()
}

fn test_env(n: &str) -> Option<String> {
    match n {
        "API_KEY" => Some("k3y".to_string()),
        "USER_NAME" => Some("ada".to_string()),
        "USER_PASS" => Some("pw".to_string()),
        _ => None,
    }
}

/// The headers and URL after `apply_auth`, starting from `headers`.
fn credentials_over(plan: &HttpPlan, mut headers: HeaderMap) -> Result<(HeaderMap, Url), Refusal> {
    let env: std::sync::Arc<super::super::EnvLookup> = std::sync::Arc::new(test_env);
    let args = serde_json::Map::new();
    let output = super::super::Output::default();
    let call = Call {
        args: &args,
        params: &[],
        protocol: toolreg_core::export::McpProtocol::LATEST,
        output: &output,
        env: &env,
    };
    let mut url = Url::parse("https://api.example.com/x").unwrap();
    plan.apply_auth(&call, &mut headers, &mut url)?;
    Ok((headers, url))
}

fn credentials(plan: &HttpPlan) -> Result<(HeaderMap, Url), Refusal> {
    credentials_over(plan, HeaderMap::new())
}

#[test]
fn credentials_come_from_the_environment_the_authentication_block_names() {
    let (h, _) = credentials(&plan("  type: bearer\n  secret_env_var: API_KEY\n", "")).unwrap();
    assert_eq!(h["authorization"], "Bearer k3y");
    let (h, _) = credentials(&plan(
        "  type: api_key\n  location: header\n  name: X-Api-Key\n  notes:\n    env: API_KEY\n",
        "",
    ))
    .unwrap();
    assert_eq!(h["x-api-key"], "k3y");
    let (_, url) = credentials(&plan(
        "  type: api_key\n  location: query\n  name: key\n  secret_env_var: API_KEY\n",
        "",
    ))
    .unwrap();
    assert_eq!(url.query(), Some("key=k3y"));
    let (h, _) = credentials(&plan(
        "  type: basic\n  username_env: USER_NAME\n  password_env: USER_PASS\n",
        "",
    ))
    .unwrap();
    assert_eq!(h["authorization"], "Basic YWRhOnB3");
    let err =
        credentials(&plan("  type: bearer\n  secret_env_var: MISSING_KEY\n", "")).unwrap_err();
    assert!(err.message.contains("MISSING_KEY is not set"), "{err:?}");
    // a header the definition sets itself is left to it (filled per call)
    let own = plan(
        "  type: bearer\n  secret_env_var: MISSING_KEY\n",
        "  headers:\n    Authorization: 'Bearer {API_KEY}'\n",
    );
    let mut set = HeaderMap::new();
    set.insert(
        AUTHORIZATION,
        HeaderValue::from_static("Bearer from-definition"),
    );
    let (headers, _) = credentials_over(&own, set).unwrap();
    assert_eq!(headers[AUTHORIZATION], "Bearer from-definition");
}

#[test]
fn header_values_with_line_breaks_are_refused() {
    assert!(header_value("X-Note", "fine value").is_ok());
    for bad in ["a\r\nX-Evil: 1", "a\nb", "a\rb"] {
        let err = header_value("X-Note", bad).unwrap_err();
        assert!(
            err.message.contains("X-Note") && err.message.contains("line break"),
            "{err:?}"
        );
        assert_eq!(err.outcome, "error: line break in a header");
    }
    assert!(header_value("X-Note", "nul\0byte").is_err());
}
