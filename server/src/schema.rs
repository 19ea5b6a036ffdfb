//! The diesel schema: one set of `table!`s for both SQLite and PostgreSQL
//! (kept in step by hand with `migrations/sqlite` and `migrations/postgres`).

diesel::table! {
    users (id) {
        id -> BigInt,
        login -> Text,
        tier -> Text,
        is_admin -> Bool,
        created_at -> Timestamp,
    }
}

diesel::table! {
    tokens (id) {
        id -> BigInt,
        user_id -> BigInt,
        name -> Text,
        token_hash -> Text,
        scopes -> Text,
        agent -> Bool,
        expires_at -> Nullable<Timestamp>,
        created_at -> Timestamp,
        last_used_at -> Nullable<Timestamp>,
        revoked_at -> Nullable<Timestamp>,
        parent_id -> Nullable<BigInt>,
        /// The CI run an exchanged (trusted publishing) token came from, as JSON.
        provenance -> Nullable<Text>,
        /// The deployment environment that run's ID token claimed.
        oidc_environment -> Nullable<Text>,
    }
}

diesel::table! {
    tools (id) {
        id -> BigInt,
        name -> Text,
        normalized_name -> Text,
        created_at -> Timestamp,
        updated_at -> Timestamp,
        downloads -> BigInt,
    }
}

diesel::table! {
    tool_owners (tool_id, user_id) {
        tool_id -> BigInt,
        user_id -> BigInt,
        created_at -> Timestamp,
    }
}

diesel::table! {
    /// Pending owner invitations (`models::invitation`).
    owner_invitations (id) {
        id -> BigInt,
        tool_id -> BigInt,
        invitee_id -> BigInt,
        inviter_id -> BigInt,
        created_at -> Timestamp,
        expires_at -> Timestamp,
    }
}

diesel::table! {
    versions (id) {
        id -> BigInt,
        tool_id -> BigInt,
        version -> Text,
        version_key -> Text,
        sha256 -> Text,
        size -> BigInt,
        format -> Text,
        execution -> Text,
        publisher_id -> BigInt,
        token_id -> Nullable<BigInt>,
        publisher_tier -> Text,
        yanked -> Bool,
        blocked -> Bool,
        blocked_reason -> Nullable<Text>,
        downloads -> BigInt,
        published_at -> Timestamp,
        /// The manifest's listing fields as JSON (`models::version::ManifestSummary`).
        summary -> Text,
        /// SemVer precedence as a byte-ordered string (`models::version::precedence_key`).
        version_order -> Text,
        /// The CI run that published the version (trusted publishing), as JSON.
        provenance -> Nullable<Text>,
        /// Withheld by an administrator (`models::quarantine`).
        quarantined -> Bool,
        quarantine_reason -> Nullable<Text>,
        quarantined_at -> Nullable<Timestamp>,
        /// The definition fingerprint (`sha256:` + hex); NULL only until the
        /// server's start-up fills in versions published before it was stored.
        definition_sha256 -> Nullable<Text>,
        /// An owner's deprecation as JSON (`models::deprecation`); NULL when
        /// the version is not deprecated.
        deprecation -> Nullable<Text>,
    }
}

diesel::table! {
    /// Users' reports of harmful versions (`models::report`).
    reports (id) {
        id -> BigInt,
        version_id -> BigInt,
        reporter_id -> BigInt,
        reason -> Text,
        /// `open` or `closed`.
        status -> Text,
        created_at -> Timestamp,
    }
}

diesel::table! {
    /// A version's large texts, apart from its small, often-read `versions` row.
    version_contents (version_id) {
        version_id -> BigInt,
        /// The canonical `toolreg_core::Tool` as JSON.
        manifest -> Text,
        definition_file -> Text,
        definition -> Text,
        readme -> Nullable<Text>,
        /// The definition lint's findings (`toolreg_core::lint::Finding`s) as a JSON array.
        findings -> Text,
        /// The README as sanitized HTML, rendered at publish.
        readme_html -> Nullable<Text>,
    }
}

diesel::table! {
    changes (seq) {
        seq -> BigInt,
        tool_id -> BigInt,
        tool_name -> Text,
        version -> Text,
        kind -> Text,
        created_at -> Timestamp,
    }
}

diesel::table! {
    audit_log (id) {
        id -> BigInt,
        action -> Text,
        actor_login -> Nullable<Text>,
        token_id -> Nullable<BigInt>,
        tool -> Nullable<Text>,
        version -> Nullable<Text>,
        detail -> Text,
        created_at -> Timestamp,
    }
}

diesel::table! {
    log_entries (idx) {
        idx -> BigInt,
        version_id -> BigInt,
        tool -> Text,
        version -> Text,
        sha256 -> Text,
        record -> Text,
        leaf_hash -> Binary,
        created_at -> Timestamp,
    }
}

diesel::table! {
    /// Each tool's summary as the JSON body `GET /api/v1/tools/{name}` sends
    /// (`models::tool_summary`).
    tool_summaries (tool_id) {
        tool_id -> BigInt,
        body -> Text,
        /// The version the tool is listed under (NULL until filled in for
        /// a summary stored before the column existed).
        listed_version_id -> Nullable<BigInt>,
    }
}

diesel::table! {
    /// The archive a skill version is served as to skill clients
    /// (`models::skill_archive`): a blob under its own digest.
    skill_archives (version_id) {
        version_id -> BigInt,
        sha256 -> Text,
        size -> BigInt,
        /// The files it holds: a JSON array of `[path, size]`.
        files -> Text,
    }
}

diesel::table! {
    log_hashes (id) {
        id -> BigInt,
        level -> Integer,
        n -> BigInt,
        hash -> Binary,
    }
}

diesel::joinable!(tokens -> users (user_id));
diesel::joinable!(tool_owners -> tools (tool_id));
diesel::joinable!(tool_owners -> users (user_id));
diesel::joinable!(owner_invitations -> tools (tool_id));
diesel::joinable!(versions -> tools (tool_id));
diesel::joinable!(versions -> users (publisher_id));
diesel::joinable!(version_contents -> versions (version_id));
diesel::joinable!(skill_archives -> versions (version_id));
diesel::joinable!(tool_summaries -> tools (tool_id));
diesel::joinable!(trusted_publishers -> tools (tool_id));
diesel::joinable!(token_tools -> tools (tool_id));
diesel::joinable!(reports -> versions (version_id));
diesel::joinable!(reports -> users (reporter_id));

diesel::allow_tables_to_appear_in_same_query!(
    users,
    tokens,
    tools,
    tool_owners,
    owner_invitations,
    versions,
    version_contents,
    skill_archives,
    tool_summaries,
    changes,
    audit_log,
    log_entries,
    log_hashes,
    trusted_publishers,
    token_tools,
    reports
);

diesel::table! {
    /// Per tool, a CI identity (issuer, repository, workflow, environment)
    /// whose OpenID Connect ID tokens may be exchanged for a publish token.
    trusted_publishers (id) {
        id -> BigInt,
        tool_id -> BigInt,
        issuer -> Text,
        repository -> Text,
        workflow -> Text,
        environment -> Nullable<Text>,
        created_by -> BigInt,
        created_at -> Timestamp,
        /// The token that added it was an agent token: tokens exchanged
        /// through it are agent tokens too.
        creator_agent -> Bool,
        /// The provider's immutable repository ID (GitHub `repository_id`,
        /// GitLab `project_id`), once known.
        repository_id -> Nullable<Text>,
        /// The provider's immutable owner ID (GitHub `repository_owner_id`,
        /// GitLab `namespace_id`), once known.
        owner_id -> Nullable<Text>,
    }
}

diesel::table! {
    /// ID tokens already exchanged, so each is exchanged once.
    oidc_exchanges (issuer, jti) {
        issuer -> Text,
        jti -> Text,
        expires_at -> Timestamp,
    }
}

diesel::table! {
    /// The tools an exchanged token may publish new versions of.
    token_tools (token_id, tool_id) {
        token_id -> BigInt,
        tool_id -> BigInt,
    }
}

diesel::table! {
    server_policy (id) {
        id -> Integer,
        policy -> Text,
        sha256 -> Text,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    /// Start-up fills that found nothing left to do (`tool_summaries`).
    startup_fills (name) {
        name -> Text,
        done_at -> Timestamp,
    }
}
