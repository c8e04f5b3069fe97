//! TOTP (RFC 6238) codes for the sites that ask for one after the password: the seed is kept
//! sealed in the vault; the host computes the current code at the moment it fills the field.

use totp_rs::{Algorithm, Secret, TOTP};

/// The seed as stored: base32, upper case, no spaces or padding. Accepts what sites and
/// password managers show: base32 in groups, lower case, or an `otpauth://` URI.
pub fn normalize_seed(input: &str) -> Result<String, String> {
    let input = input.trim();
    let raw = if input.starts_with("otpauth://") {
        let url = reqwest::Url::parse(input).map_err(|e| format!("unreadable otpauth URI: {e}"))?;
        url.query_pairs()
            .find(|(k, _)| k == "secret")
            .map(|(_, v)| v.into_owned())
            .ok_or("the otpauth URI has no secret")?
    } else {
        input.to_owned()
    };
    let seed: String = raw
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '-' && *c != '=')
        .map(|c| c.to_ascii_uppercase())
        .collect();
    if seed.is_empty() {
        return Err("the TOTP seed is empty".into());
    }
    let bytes = Secret::Encoded(seed.clone())
        .to_bytes()
        .map_err(|_| "the TOTP seed is not base32 (letters A–Z and digits 2–7)".to_owned())?;
    if bytes.len() < 10 {
        return Err("the TOTP seed is too short (under 80 bits)".into());
    }
    Ok(seed)
}

/// The 6-digit code for `seed` at `unix_secs` (30-second steps, SHA-1: what sites use).
pub fn code(seed: &str, unix_secs: u64) -> Result<String, String> {
    let bytes = Secret::Encoded(seed.to_owned())
        .to_bytes()
        .map_err(|_| "the stored TOTP seed is not base32".to_owned())?;
    Ok(TOTP::new_unchecked(Algorithm::SHA1, 6, 1, 30, bytes).generate(unix_secs))
}

/// The code for now.
pub fn code_now(seed: &str) -> Result<String, String> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    code(seed, now)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_match_rfc_6238() {
        // RFC 6238's SHA-1 seed "12345678901234567890" in base32, its 8-digit vectors cut to 6.
        let seed = normalize_seed("gezd gnbv gy3t qojq gezd gnbv gy3t qojq").unwrap();
        assert_eq!(seed, "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ");
        assert_eq!(code(&seed, 59).unwrap(), "287082");
        assert_eq!(code(&seed, 1_111_111_109).unwrap(), "081804");
        assert_eq!(code(&seed, 2_000_000_000).unwrap(), "279037");
    }

    #[test]
    fn seeds_come_as_people_paste_them() {
        let uri = "otpauth://totp/Shop:alice?secret=JBSWY3DPEHPK3PXP&issuer=Shop";
        assert_eq!(normalize_seed(uri).unwrap(), "JBSWY3DPEHPK3PXP");
        assert!(normalize_seed("not base32 !").is_err());
        assert!(normalize_seed("JBSW").unwrap_err().contains("too short"));
        assert!(normalize_seed("otpauth://totp/x?issuer=y").is_err());
    }
}
