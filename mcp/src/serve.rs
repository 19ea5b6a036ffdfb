//! `toolreg mcp serve`'s MCP server: the [`Catalog`] behind rmcp's
//! `ServerHandler`. `tools/list` answers each tool's export for the
//! negotiated protocol version (no `listChanged`: the set is fixed for the
//! session); `tools/call` checks the arguments and runs the tool in a task
//! of its own, so a slow call never holds up another, a call that panics
//! becomes an `isError` result instead of ending the server, and a call the
//! client cancels is dropped (killing any process it started). Prompt tools
//! are also `prompts/list` and `prompts/get`.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Instant;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetPromptRequestParams,
    GetPromptResponse, GetPromptResult, Implementation, InitializeResult, ListPromptsResult,
    ListToolsResult, PaginatedRequestParams, PromptMessage, ProtocolVersion, Role,
    ServerCapabilities, ServerConfig, Tool as McpTool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use toolreg_core::export::McpProtocol;

use crate::catalog::Catalog;
use crate::protocol;

/// The server of one [`Catalog`]; cheap to clone (one per HTTP session).
#[derive(Clone)]
pub struct ServeHandler {
    catalog: Arc<Catalog>,
}

impl ServeHandler {
    /// Serve `catalog`.
    pub fn new(catalog: Arc<Catalog>) -> Self {
        ServeHandler { catalog }
    }
}

fn negotiated(context: &RequestContext<RoleServer>) -> McpProtocol {
    protocol::export_for(context.protocol_version().as_ref())
}

impl ServerHandler for ServeHandler {
    fn get_info(&self) -> ServerConfig {
        let capabilities = if self.catalog.prompts().is_empty() {
            ServerCapabilities::builder().enable_tools().build()
        } else {
            ServerCapabilities::builder()
                .enable_tools()
                .enable_prompts()
                .build()
        };
        let mut info = InitializeResult::new(capabilities);
        info.server_info = Implementation::new("toolreg", env!("CARGO_PKG_VERSION"))
            .with_title("toolreg: the project's pinned tools");
        info
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        protocol::supported()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let tools = self.catalog.tools(negotiated(&context));
        Ok(ListToolsResult::with_all_items(tools.as_ref().clone()))
    }

    fn get_tool(&self, name: &str) -> Option<McpTool> {
        let tools = self.catalog.tools(McpProtocol::LATEST);
        tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        if self.catalog.get(&name).is_none() {
            self.catalog.log().call(
                "tools/call",
                &name,
                Default::default(),
                "error: unknown tool",
            );
            return Err(McpError::invalid_params(
                format!(
                    "unknown tool `{name}`: this server serves only the project's pinned tools"
                ),
                None,
            ));
        }
        let protocol = negotiated(&context);
        let catalog = self.catalog.clone();
        let started = Instant::now();
        let task_name = name.clone();
        let mut task =
            tokio::spawn(
                async move { catalog.call(&task_name, request.arguments, protocol).await },
            );
        tokio::select! {
            joined = &mut task => match joined {
                Ok(Some(reply)) => Ok(reply.result.into()),
                Ok(None) | Err(_) => {
                    self.catalog.log().call("tools/call", &name, started.elapsed(), "error: internal failure");
                    Ok(CallToolResult::error(vec![ContentBlock::text(
                        "toolreg failed while running this tool (an internal error); the server goes on serving",
                    )])
                    .into())
                }
            },
            _ = context.ct.cancelled() => {
                task.abort();
                self.catalog.log().call("tools/call", &name, started.elapsed(), "cancelled by the client");
                Err(McpError::internal_error("the call was cancelled", None))
            }
        }
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        Ok(ListPromptsResult::with_all_items(
            self.catalog.prompts().as_ref().clone(),
        ))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        match self.catalog.prompt(&request.name, request.arguments) {
            None => Err(McpError::invalid_params(
                format!("unknown prompt `{}`", request.name),
                None,
            )),
            Some(Err(refusal)) => Err(McpError::invalid_params(refusal.message, None)),
            Some(Ok((description, text))) => {
                Ok(
                    GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
                        .with_description(description)
                        .into(),
                )
            }
        }
    }
}
