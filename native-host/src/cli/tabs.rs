//! `itinero-host tabs`: the browser's open tabs, so a person can pick one for `observe`/`act`.

use anyhow::{bail, Result};
use clap::Args;
use itinero_shared::messages::TabInfo;

use super::host::{self, HostArgs};
use crate::control::protocol::{Request, Response};

#[derive(Debug, Args)]
pub struct TabsArgs {
    #[command(flatten)]
    pub host: HostArgs,
    /// Print the tabs as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run_tabs(args: &TabsArgs) -> Result<bool> {
    let tabs = host::block_on(async {
        let mut client = host::connect(&args.host).await?;
        match host::call(&mut client, &Request::Tabs).await? {
            Response::Tabs { tabs, .. } => Ok(tabs),
            other => bail!("unexpected response to tabs: {other:?}"),
        }
    })?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&tabs)?);
    } else {
        print!("{}", table(&tabs));
    }
    Ok(true)
}

/// One line per tab; `*` marks the selected tab of each window.
fn table(tabs: &[TabInfo]) -> String {
    let mut out = format!(
        "{:>10} {:>7}   {:<40} {}\n",
        "TAB", "WINDOW", "TITLE", "URL"
    );
    for t in tabs {
        out.push_str(&format!(
            "{:>10} {:>7} {} {:<40} {}\n",
            t.tab_id,
            t.window_id,
            if t.active { '*' } else { ' ' },
            shorten(&t.title, 40),
            t.url
        ));
    }
    out
}

fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_owned();
    }
    let mut cut: String = s.chars().take(max - 1).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_marks_the_active_tab_and_shortens_titles() {
        let tabs = vec![
            TabInfo {
                tab_id: 12,
                window_id: 3,
                url: "https://a.example/".into(),
                title: "A".repeat(50),
                active: true,
            },
            TabInfo {
                tab_id: 13,
                window_id: 3,
                url: "https://b.example/".into(),
                title: "B".into(),
                active: false,
            },
        ];
        let text = table(&tabs);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[1].contains(" * ") && lines[1].contains('…'), "{text}");
        assert!(lines[2].trim_start().starts_with("13"), "{text}");
        assert!(lines[2].ends_with("https://b.example/"), "{text}");
    }
}
