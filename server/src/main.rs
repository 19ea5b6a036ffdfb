//! The `toolreg-server` binary: parse the command line and hand over to the library.

use clap::Parser;

fn main() -> std::process::ExitCode {
    let cli = toolreg_server::config::Cli::parse();
    toolreg_server::run(cli)
}
