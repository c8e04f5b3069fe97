//! Reading the CSV exports of other password managers: Bitwarden (`login_uri`,
//! `login_username`, `login_password`, `login_totp`), KeePassXC (`URL`, `Username`, `Password`,
//! `TOTP`, `Notes`) and Chrome (`url`, `username`, `password`, `note`). Columns are found by
//! name, so column order and extra columns do not matter. A row that cannot be used is
//! reported by number and why, never with its password.

use zeroize::Zeroizing;

use crate::store::origin_of;

/// A row that can become a credential.
pub struct Row {
    /// The CSV line it came from (the header is line 1).
    pub line: usize,
    pub origin: String,
    pub username: String,
    pub password: Zeroizing<String>,
    pub totp: Option<Zeroizing<String>>,
    pub notes: String,
}

pub struct Parsed {
    pub format: &'static str,
    pub rows: Vec<Row>,
    pub skipped: Vec<String>,
}

/// The first of `names` that is a column, case-insensitively.
fn column(header: &csv::StringRecord, names: &[&str]) -> Option<usize> {
    header
        .iter()
        .position(|h| names.iter().any(|n| h.trim().eq_ignore_ascii_case(n)))
}

pub fn parse(text: &str) -> Result<Parsed, String> {
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(text.trim_start_matches('\u{feff}').as_bytes());
    let header = reader
        .headers()
        .map_err(|e| format!("not a CSV file: {e}"))?
        .clone();
    let url = column(&header, &["login_uri", "url", "website", "origin"]);
    let user = column(
        &header,
        &["login_username", "username", "user name", "login"],
    );
    let pass = column(&header, &["login_password", "password"]);
    let (Some(url), Some(pass)) = (url, pass) else {
        return Err("the CSV has no URL and password columns (expected an export of Bitwarden, KeePassXC or Chrome)".into());
    };
    let totp = column(&header, &["login_totp", "totp", "otp"]);
    let notes = column(&header, &["notes", "note"]);
    let format = if column(&header, &["login_uri"]).is_some() {
        "bitwarden"
    } else if column(&header, &["group", "title"]).is_some() {
        "keepassxc"
    } else if column(&header, &["name"]).is_some() && column(&header, &["note"]).is_some() {
        "chrome"
    } else {
        "csv"
    };
    let mut rows = Vec::new();
    let mut skipped = Vec::new();
    for (i, record) in reader.records().enumerate() {
        let line = i + 2;
        let record = match record {
            Ok(r) => r,
            Err(e) => {
                skipped.push(format!("line {line}: unreadable ({e})"));
                continue;
            }
        };
        let field = |c: Option<usize>| {
            c.and_then(|c| record.get(c))
                .unwrap_or_default()
                .trim()
                .to_owned()
        };
        let address = field(Some(url));
        // Bitwarden puts several URIs in one field, one per line: the first is the login page.
        let address = address.lines().next().unwrap_or_default().trim().to_owned();
        let origin = match origin_of(&address) {
            Some(o) if o.starts_with("http://") || o.starts_with("https://") => o,
            _ => {
                let why = if address.is_empty() {
                    "no URL".to_owned()
                } else {
                    format!("{address:?} is not a web address")
                };
                skipped.push(format!("line {line}: {why}"));
                continue;
            }
        };
        let password = Zeroizing::new(field(Some(pass)));
        if password.is_empty() {
            skipped.push(format!("line {line} ({origin}): no password"));
            continue;
        }
        let totp = Some(Zeroizing::new(field(totp))).filter(|t| !t.is_empty());
        rows.push(Row {
            line,
            origin,
            username: field(user),
            password,
            totp,
            notes: field(notes),
        });
    }
    Ok(Parsed {
        format,
        rows,
        skipped,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_three_exports_are_read_by_their_columns() {
        let bitwarden = "folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp\n\
            ,,login,Shop,,,0,https://shop.example/login,alice,correct horse,JBSWY3DPEHPK3PXP\n\
            ,,note,Secret note,hello,,0,,,,\n";
        let p = parse(bitwarden).unwrap();
        assert_eq!(p.format, "bitwarden");
        assert_eq!(p.rows.len(), 1);
        assert_eq!(p.rows[0].origin, "https://shop.example");
        assert_eq!(p.rows[0].username, "alice");
        assert_eq!(p.rows[0].password.as_str(), "correct horse");
        assert_eq!(
            p.rows[0].totp.as_deref().map(|s| s.as_str()),
            Some("JBSWY3DPEHPK3PXP")
        );
        assert_eq!(p.skipped, ["line 3: no URL"]);

        let keepass = "\"Group\",\"Title\",\"Username\",\"Password\",\"URL\",\"Notes\",\"TOTP\"\n\
            \"Root\",\"Bank\",\"bob\",\"hunter2\",\"https://bank.example:8443/\",\"\",\"\"\n";
        let p = parse(keepass).unwrap();
        assert_eq!(p.format, "keepassxc");
        assert_eq!(p.rows[0].origin, "https://bank.example:8443");
        assert!(p.rows[0].totp.is_none());

        let chrome = "name,url,username,password,note\n\
            shop.example,https://shop.example/,carol,pw1,\n\
            app,android://x@com.example/,carol,pw2,\n\
            empty,https://empty.example/,dave,,\n";
        let p = parse(chrome).unwrap();
        assert_eq!(p.format, "chrome");
        assert_eq!(p.rows.len(), 1);
        assert_eq!(p.skipped.len(), 2);
        assert!(
            p.skipped.iter().all(|s| !s.contains("pw")),
            "{:?}",
            p.skipped
        );
        assert!(p.skipped[1].contains("no password"));
    }

    #[test]
    fn a_file_without_the_columns_is_refused_saying_what_was_expected() {
        let err = parse("a,b\n1,2\n").err().unwrap();
        assert!(err.contains("Bitwarden, KeePassXC or Chrome"), "{err}");
    }
}
