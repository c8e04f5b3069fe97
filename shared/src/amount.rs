//! An amount as a person writes it — "$1,250.50", "1,250 dollars", "€40", "twenty-five euros" —
//! as the plain number a number field keeps. A browser's `<input type="number">` drops anything
//! else without a word, so the currency and the thousands separators have to go first.

/// Currency signs and names that may stand before or after an amount.
const CURRENCIES: &[&str] = &[
    "$", "€", "£", "¥", "usd", "eur", "gbp", "chf", "dollar", "dollars", "euro", "euros", "pound",
    "pounds", "franc", "francs", "bucks",
];

const UNITS: [&str; 20] = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
];

const TENS: [&str; 8] = [
    "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
];

/// The plain number `text` writes (`1250.50`), or `None` where it is one already, or no single
/// amount (a phone number, a card number, a range, a sentence): those are typed as written.
pub fn plain(text: &str) -> Option<String> {
    let lower = text.trim().to_lowercase();
    let mut rest = lower.as_str();
    // Signs written against the number ("$40", "40€") and names apart from it ("40 euros").
    let mut changed = false;
    loop {
        let before = rest;
        for c in CURRENCIES {
            // A currency's name stands apart from the number; its sign may touch it.
            let word = c.chars().all(char::is_alphabetic);
            if let Some(r) = rest.strip_prefix(c) {
                if !word || r.starts_with(' ') {
                    rest = r.trim_start();
                }
            }
            if let Some(r) = rest.strip_suffix(c) {
                if !word || r.ends_with(' ') {
                    rest = r.trim_end();
                }
            }
        }
        if rest == before {
            break;
        }
        changed = true;
    }
    if rest.is_empty() {
        return None;
    }
    if let Some(n) = digits(rest) {
        return (changed || n != rest).then_some(n);
    }
    words(rest).map(|n| n.to_string())
}

/// `1,250.50` or `1250.5`: the number without its thousands separators, where they sit every
/// three digits.
fn digits(s: &str) -> Option<String> {
    let (whole, fraction) = match s.split_once('.') {
        Some((w, f)) if !f.is_empty() && f.chars().all(|c| c.is_ascii_digit()) => (w, Some(f)),
        Some(_) => return None,
        None => (s, None),
    };
    let groups: Vec<&str> = whole.split(',').collect();
    let well_grouped = groups.len() == 1
        || (!groups[0].is_empty()
            && groups[0].len() <= 3
            && groups[1..].iter().all(|g| g.len() == 3));
    if !well_grouped
        || groups
            .iter()
            .any(|g| g.is_empty() || !g.chars().all(|c| c.is_ascii_digit()))
    {
        return None;
    }
    let whole = groups.concat();
    Some(match fraction {
        Some(f) => format!("{whole}.{f}"),
        None => whole,
    })
}

/// A whole number in English words, up to the millions: "twenty-five", "a hundred",
/// "one thousand two hundred and fifty".
fn words(s: &str) -> Option<u64> {
    let mut total = 0u64;
    let mut group = 0u64;
    let mut any = false;
    for w in s.split(|c: char| c.is_whitespace() || c == '-') {
        match w {
            "" | "and" => continue,
            "a" | "an" if !any => group = 1,
            "hundred" => group = group.max(1) * 100,
            "thousand" | "million" => {
                let scale = if w == "thousand" { 1_000 } else { 1_000_000 };
                total += group.max(1) * scale;
                group = 0;
            }
            _ => {
                if let Some(n) = UNITS.iter().position(|u| *u == w) {
                    group += n as u64;
                } else if let Some(n) = TENS.iter().position(|t| *t == w) {
                    group += 20 + 10 * n as u64;
                } else {
                    return None;
                }
            }
        }
        any = true;
    }
    any.then_some(total + group)
}

#[cfg(test)]
mod tests {
    use super::plain;

    #[test]
    fn amounts_as_people_write_them_become_plain_numbers() {
        for (written, number) in [
            ("$1,250.50", "1250.50"),
            ("1,250 dollars", "1250"),
            ("€40", "40"),
            ("40€", "40"),
            ("£ 2,000", "2000"),
            ("12,345,678", "12345678"),
            ("twenty-five euros", "25"),
            ("a hundred pounds", "100"),
            ("two hundred", "200"),
            ("one thousand two hundred and fifty", "1250"),
            ("twelve", "12"),
        ] {
            assert_eq!(plain(written).as_deref(), Some(number), "{written}");
        }
    }

    #[test]
    fn plain_numbers_and_other_digits_are_left_as_written() {
        for written in [
            "1250.50",
            "42",
            "0123",
            "+44 20 7123 4567",
            "4111 1111 1111 1111",
            "1,25",
            "12,34,567",
            "10-20",
            "next friday",
            "$",
            "dollars",
            "eurovision",
        ] {
            assert_eq!(plain(written), None, "{written}");
        }
    }
}
