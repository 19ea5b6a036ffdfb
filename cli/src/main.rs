//! `toolreg`: publish, search, pin and install AI-agent tools.
//! Exit codes: 0 success, 1 failure (one `error:` line, then detail), 2 usage.

use clap::Parser;

use toolreg_cli::args::Cli;

fn main() {
    let cli = Cli::parse();
    let json = cli.json;
    let code = match toolreg_cli::commands::run(cli) {
        Ok(code) => code,
        Err(err) => {
            toolreg_cli::output::report(&err, json);
            err.exit_code()
        }
    };
    std::process::exit(code);
}
