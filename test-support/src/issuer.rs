//! A real OpenID Connect issuer on loopback, for the trusted-publishing
//! tests: it generates its own Ed25519 keys, serves its discovery document
//! and key set over HTTP, mints ID tokens with GitHub Actions' claims, and
//! answers GitHub's ID-token request (`ACTIONS_ID_TOKEN_REQUEST_URL`) the
//! way a runner does, so `toolreg publish` can be run as in a workflow.
//!
//! It is a small HTTP/1.1 server on a thread (one request per connection),
//! enough for the registry's discovery client and the CLI.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{json, Value};

/// The PKCS#8 (RFC 8410) prefix of an Ed25519 private key; the 32-byte
/// seed follows.
const ED25519_PKCS8_PREFIX: [u8; 16] = [
    0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
];

/// One signing key: its id and seed.
#[derive(Clone)]
struct Key {
    kid: String,
    seed: [u8; 32],
}

impl Key {
    fn generate() -> Key {
        let seed: [u8; 32] = rand::random();
        Key {
            kid: format!("key-{}", hex(&seed[..4])),
            seed,
        }
    }

    fn public_jwk(&self) -> Value {
        let public = ed25519_dalek::SigningKey::from_bytes(&self.seed)
            .verifying_key()
            .to_bytes();
        json!({"kty": "OKP", "crv": "Ed25519", "alg": "EdDSA", "use": "sig",
               "kid": self.kid, "x": URL_SAFE_NO_PAD.encode(public)})
    }

    fn sign(&self, claims: &Value) -> String {
        let mut der = ED25519_PKCS8_PREFIX.to_vec();
        der.extend_from_slice(&self.seed);
        let mut header = Header::new(Algorithm::EdDSA);
        header.kid = Some(self.kid.clone());
        jsonwebtoken::encode(&header, claims, &EncodingKey::from_ed_der(&der))
            .expect("sign an ID token")
    }
}

/// A provider's numeric ID for `name`, the same on every call (GitHub's
/// claims carry the repository's and owner's IDs as decimal strings); a
/// test of a recreated or renamed repository sets other ones.
pub fn stable_id(name: &str) -> String {
    let hash = name.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    (hash % 1_000_000_000).to_string()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

struct State {
    /// Every key the key set lists; the last one signs.
    keys: Vec<Key>,
    /// Claims the Actions token endpoint mints (plus `aud` from the request).
    actions_claims: Value,
    actions_request_token: String,
}

/// A running issuer; it stops serving when the test process ends.
pub struct Issuer {
    /// The issuer URL (`http://127.0.0.1:PORT`), as the `iss` claim and
    /// the registry's `--trusted-issuer`.
    pub url: String,
    state: Arc<Mutex<State>>,
}

impl Issuer {
    /// Start an issuer with one fresh key.
    pub fn start() -> Issuer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the issuer");
        let url = format!(
            "http://{}",
            listener.local_addr().expect("the issuer's address")
        );
        let state = Arc::new(Mutex::new(State {
            keys: vec![Key::generate()],
            actions_claims: json!({}),
            actions_request_token: format!("req-{}", hex(&rand::random::<[u8; 8]>())),
        }));
        let (served, base) = (state.clone(), url.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (state, base) = (served.clone(), base.clone());
                std::thread::spawn(move || serve(stream, &state, &base));
            }
        });
        Issuer { url, state }
    }

    /// Add a new key, which signs from now on; the key set lists the old
    /// ones too (as issuers do while rotating). Returns the new `kid`.
    pub fn rotate(&self) -> String {
        let key = Key::generate();
        let kid = key.kid.clone();
        self.state.lock().expect("issuer state").keys.push(key);
        kid
    }

    /// The `kid` that signs now.
    pub fn current_kid(&self) -> String {
        let state = self.state.lock().expect("issuer state");
        state.keys.last().map(|k| k.kid.clone()).unwrap_or_default()
    }

    /// GitHub Actions' claims for a run of `workflow_file` in `repository`
    /// at a tag, with fresh `jti`, times and audience `toolreg`.
    pub fn github_claims(&self, repository: &str, workflow_file: &str) -> Value {
        let now = chrono_now();
        json!({
            "iss": self.url,
            "aud": "toolreg",
            "sub": format!("repo:{repository}:ref:refs/tags/v1.1.0"),
            "jti": format!("jti-{}", hex(&rand::random::<[u8; 12]>())),
            "iat": now,
            "nbf": now,
            "exp": now + 300,
            "repository": repository,
            "repository_owner": repository.split('/').next().unwrap_or_default(),
            "repository_id": stable_id(repository),
            "repository_owner_id": stable_id(repository.split('/').next().unwrap_or_default()),
            "workflow": "Release",
            "job_workflow_ref": format!("{repository}/.github/workflows/{workflow_file}@refs/tags/v1.1.0"),
            "ref": "refs/tags/v1.1.0",
            "ref_type": "tag",
            "sha": "0123456789abcdef0123456789abcdef01234567",
            "run_id": "4242",
            "run_attempt": "1",
            "event_name": "push",
            "runner_environment": "github-hosted",
        })
    }

    /// An ID token of `claims`, signed with the current key.
    pub fn mint(&self, claims: &Value) -> String {
        let key = {
            let state = self.state.lock().expect("issuer state");
            state.keys.last().cloned().expect("a key")
        };
        key.sign(claims)
    }

    /// An ID token of `claims` signed by a key the issuer does not publish,
    /// under the current key's `kid`: its signature cannot verify.
    pub fn mint_forged(&self, claims: &Value) -> String {
        let mut forged = Key::generate();
        forged.kid = self.current_kid();
        forged.sign(claims)
    }

    /// The environment a GitHub Actions job with `id-token: write` has:
    /// `ACTIONS_ID_TOKEN_REQUEST_URL` (with a query, as GitHub's has) and
    /// `ACTIONS_ID_TOKEN_REQUEST_TOKEN`. The endpoint mints `claims` with
    /// the audience the request asks for and a fresh `jti`.
    pub fn actions_env(&self, claims: Value) -> Vec<(String, String)> {
        let mut state = self.state.lock().expect("issuer state");
        state.actions_claims = claims;
        vec![
            (
                "ACTIONS_ID_TOKEN_REQUEST_URL".to_string(),
                format!("{}/actions/id-token?api-version=2.0", self.url),
            ),
            (
                "ACTIONS_ID_TOKEN_REQUEST_TOKEN".to_string(),
                state.actions_request_token.clone(),
            ),
        ]
    }
}

fn chrono_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or_default()
}

/// Answer one request on `stream`.
fn serve(stream: TcpStream, state: &Mutex<State>, base: &str) {
    let mut reader = BufReader::new(match stream.try_clone() {
        Ok(s) => s,
        Err(_) => return,
    });
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    let mut authorization = String::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" || line == "\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            if name.eq_ignore_ascii_case("authorization") {
                authorization = value.trim().to_string();
            }
        }
    }
    let target = request_line.split_whitespace().nth(1).unwrap_or("/");
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let (status, body) = match path {
        "/.well-known/openid-configuration" => (
            200,
            json!({"issuer": base, "jwks_uri": format!("{base}/keys"),
                   "id_token_signing_alg_values_supported": ["EdDSA"],
                   "response_types_supported": ["id_token"],
                   "subject_types_supported": ["public"]}),
        ),
        "/keys" => {
            let state = state.lock().expect("issuer state");
            let keys: Vec<Value> = state.keys.iter().map(Key::public_jwk).collect();
            (200, json!({ "keys": keys }))
        }
        "/actions/id-token" => {
            let state = state.lock().expect("issuer state");
            let expected = format!("bearer {}", state.actions_request_token);
            if !authorization.eq_ignore_ascii_case(&expected) {
                (401, json!({"message": "bad request token"}))
            } else {
                let audience = query
                    .split('&')
                    .find_map(|p| p.strip_prefix("audience="))
                    .unwrap_or("")
                    .to_string();
                let mut claims = state.actions_claims.clone();
                claims["aud"] = Value::String(audience);
                claims["jti"] = Value::String(format!("jti-{}", hex(&rand::random::<[u8; 12]>())));
                let key = state.keys.last().cloned().expect("a key");
                (200, json!({ "value": key.sign(&claims) }))
            }
        }
        _ => (404, json!({"message": "not found"})),
    };
    let body = body.to_string();
    let reason = match status {
        200 => "OK",
        401 => "Unauthorized",
        _ => "Not Found",
    };
    let mut stream = stream;
    let _ = write!(
        stream,
        "HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
}
