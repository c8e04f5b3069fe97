//! Values as a person writes them, in the format a date, time or number field takes. A
//! browser's `<input type="date">` keeps only `2027-03-14` and drops "14 March 2027" without a
//! word, as a number field drops "$1,250" (`amount.rs` reads those), so the content script
//! types the field's own format, and the host compares a field's value with the wanted one in
//! the same format. Shared so that both read a value alike.

/// A date as year, month and day; a time as hour and minute.
type Date = (u32, u32, u32);
type Time = (u32, u32);

/// The month names a date may be written with, by their first three letters.
const MONTHS: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];

/// The format a field keeps, from its `type` and its `inputmode`: a text field that asks for a
/// number's keyboard keeps a number, as a number field does.
pub fn format_of<'a>(input_type: &'a str, inputmode: Option<&str>) -> &'a str {
    let numeric = inputmode.is_some_and(|m| matches!(m.trim(), "decimal" | "numeric"));
    if input_type == "text" && numeric {
        "number"
    } else {
        input_type
    }
}

/// `text` in the wire format of an input of type `input_type` (`date`, `time`, `month`,
/// `datetime-local`; `number`, an amount without its currency or separators), or `None` where the type has no such format or the text is no date or
/// time this reads (a field then gets the text as written, and says if it kept nothing).
pub fn as_input_value(input_type: &str, text: &str) -> Option<String> {
    let text = text.trim();
    match input_type {
        "date" => date(text).map(|(y, m, d)| format!("{y:04}-{m:02}-{d:02}")),
        "time" => time(text).map(|(h, m)| format!("{h:02}:{m:02}")),
        "month" => month_of_year(text).map(|(y, m)| format!("{y:04}-{m:02}")),
        "datetime-local" => datetime(text)
            .map(|((y, mo, d), (h, mi))| format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}")),
        "number" => crate::amount::plain(text),
        _ => None,
    }
}

/// Whether a field of `input_type` holding `current` holds what `wanted` says, each read in the
/// field's format where it has one.
pub fn same_value(input_type: &str, current: &str, wanted: &str) -> bool {
    let wanted = as_input_value(input_type, wanted).unwrap_or_else(|| wanted.trim().to_owned());
    current.trim() == wanted
}

/// Words of a date or time: letters and digits, the separators between them dropped except
/// where they tell parts apart (`:` `.` `-` `/`).
fn tokens(text: &str) -> Vec<String> {
    let lower = text.to_lowercase().replace(',', " ");
    lower
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()).to_owned())
        .filter(|w| !w.is_empty())
        .collect()
}

/// The month (1–12) a name or a usual abbreviation of it says ("March", "mar", "Sept.").
pub(crate) fn month(word: &str) -> Option<u32> {
    let w = word.trim_end_matches('.');
    if w.len() < 3 {
        return None;
    }
    let at = MONTHS.iter().position(|m| w.starts_with(m))?;
    // "mar" and "march" are March; "marble" is no month.
    let full = [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ][at];
    let sept = at == 8 && w == "sept";
    (full.starts_with(w) || sept).then_some(at as u32 + 1)
}

/// "14", "14th", "1st" → the day.
fn day(word: &str) -> Option<u32> {
    let digits = word.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &word[digits.len()..];
    if !matches!(suffix, "" | "st" | "nd" | "rd" | "th") {
        return None;
    }
    digits.parse().ok().filter(|d| (1..=31).contains(d))
}

fn year(word: &str) -> Option<u32> {
    (word.len() == 4)
        .then(|| word.parse().ok())
        .flatten()
        .filter(|y| (1000..=9999).contains(y))
}

fn valid(y: u32, m: u32, d: u32) -> Option<Date> {
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return None,
    };
    (1..=days).contains(&d).then_some((y, m, d))
}

const WEEKDAYS: [&str; 7] = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];

/// A date: `2027-03-14`, `14 March 2027`, `March 14th, 2027`, `Mar 14 2027`, `14.03.2027`,
/// with or without a weekday before it. Slashed dates (`03/04/2027`) are left alone: which
/// part is the month depends on where the writer lives.
fn date(text: &str) -> Option<Date> {
    let t = text.trim();
    if let Some((y, rest)) = t.split_once('-') {
        let mut parts = rest.split('-');
        if let (Some(m), Some(d), None) = (parts.next(), parts.next(), parts.next()) {
            if let (Some(y), Ok(m), Ok(d)) = (year(y), m.parse(), d.parse()) {
                return valid(y, m, d);
            }
        }
    }
    let dotted: Vec<&str> = t.split('.').collect();
    if let [d, m, y] = dotted.as_slice() {
        if let (Ok(d), Ok(m), Some(y)) = (d.parse(), m.parse(), year(y)) {
            return valid(y, m, d);
        }
    }
    let mut words = tokens(t);
    if words
        .first()
        .is_some_and(|w| WEEKDAYS.iter().any(|d| w.starts_with(d)) && month(w).is_none())
    {
        words.remove(0);
    }
    words.retain(|w| w != "of" && w != "the");
    match words.as_slice() {
        [a, b, c] => {
            let y = year(c)?;
            if let (Some(d), Some(m)) = (day(a), month(b)) {
                return valid(y, m, d);
            }
            let (m, d) = (month(a)?, day(b)?);
            valid(y, m, d)
        }
        _ => None,
    }
}

/// A time of day: `19:45`, `7:45 pm`, `7.45pm`, `7 PM`, `7:45 p.m.`, `noon`, `midnight`.
fn time(text: &str) -> Option<Time> {
    let t = text.trim().to_lowercase();
    match t.as_str() {
        "noon" | "midday" => return Some((12, 0)),
        "midnight" => return Some((0, 0)),
        _ => {}
    }
    let compact: String = t.chars().filter(|c| !c.is_whitespace()).collect();
    let (clock, half) = if let Some(c) = compact.strip_suffix("a.m.").or(compact.strip_suffix("am"))
    {
        (c, Some(false))
    } else if let Some(c) = compact.strip_suffix("p.m.").or(compact.strip_suffix("pm")) {
        (c, Some(true))
    } else {
        (compact.as_str(), None)
    };
    let (h, m) = match clock.split_once([':', '.', 'h']) {
        Some((h, m)) if m.len() == 2 => (h.parse::<u32>().ok()?, m.parse::<u32>().ok()?),
        Some((h, "")) if half.is_none() => (h.parse::<u32>().ok()?, 0),
        None if half.is_some() => (clock.parse::<u32>().ok()?, 0),
        _ => return None,
    };
    if m > 59 {
        return None;
    }
    let h = match half {
        Some(pm) if (1..=12).contains(&h) => (h % 12) + if pm { 12 } else { 0 },
        Some(_) => return None,
        None if h <= 23 => h,
        None => return None,
    };
    Some((h, m))
}

/// A month of a year: `2027-03`, `March 2027`, `Mar 2027`.
fn month_of_year(text: &str) -> Option<(u32, u32)> {
    if let Some((y, m)) = text.trim().split_once('-') {
        if let (Some(y), Ok(m)) = (year(y), m.parse::<u32>()) {
            return (1..=12).contains(&m).then_some((y, m));
        }
    }
    match tokens(text).as_slice() {
        [m, y] => Some((year(y)?, month(m)?)),
        _ => None,
    }
}

/// A date and a time: `2027-03-14T19:45`, or a date then a time, "at" between them or not.
fn datetime(text: &str) -> Option<(Date, Time)> {
    if let Some((d, t)) = text.trim().split_once('T') {
        if let (Some(d), Some(t)) = (date(d), time(t)) {
            return Some((d, t));
        }
    }
    let lower = text.to_lowercase();
    if let Some((d, t)) = lower.split_once(" at ") {
        return Some((date(d)?, time(t)?));
    }
    // The time is the last one or two words ("7:45 pm").
    let words: Vec<&str> = text.split_whitespace().collect();
    (1..=2.min(words.len().saturating_sub(1))).find_map(|k| {
        let (d, t) = words.split_at(words.len() - k);
        Some((date(&d.join(" "))?, time(&t.join(" "))?))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_in_words_become_the_field_s_format() {
        for (written, wire) in [
            ("14 March 2027", "2027-03-14"),
            ("March 14, 2027", "2027-03-14"),
            ("Mar 4 2028", "2028-03-04"),
            ("Sept 4th, 2028", "2028-09-04"),
            ("Tuesday, 2 February 2027", "2027-02-02"),
            ("2027-03-14", "2027-03-14"),
            ("14.03.2027", "2027-03-14"),
            ("the 1st of May 2027", "2027-05-01"),
        ] {
            assert_eq!(
                as_input_value("date", written).as_deref(),
                Some(wire),
                "{written}"
            );
        }
        for no in [
            "03/04/2027",
            "30 February 2027",
            "next Friday",
            "Marble 3 2027",
            "14 March",
        ] {
            assert_eq!(as_input_value("date", no), None, "{no}");
        }
    }

    #[test]
    fn times_of_day_take_a_twelve_hour_clock_and_its_spellings() {
        for (written, wire) in [
            ("7:45 pm", "19:45"),
            ("7:45 PM", "19:45"),
            ("3.45am", "03:45"),
            ("12:30 am", "00:30"),
            ("12 pm", "12:00"),
            ("11 p.m.", "23:00"),
            ("19:45", "19:45"),
            ("noon", "12:00"),
        ] {
            assert_eq!(
                as_input_value("time", written).as_deref(),
                Some(wire),
                "{written}"
            );
        }
        for no in ["13 pm", "7:75", "25:00", "seven", "7"] {
            assert_eq!(as_input_value("time", no), None, "{no}");
        }
    }

    #[test]
    fn months_and_dates_with_times_and_other_types() {
        assert_eq!(
            as_input_value("month", "March 2027").as_deref(),
            Some("2027-03")
        );
        assert_eq!(
            as_input_value("datetime-local", "14 March 2027 at 7:45 pm").as_deref(),
            Some("2027-03-14T19:45")
        );
        assert_eq!(
            as_input_value("datetime-local", "March 14, 2027 19:45").as_deref(),
            Some("2027-03-14T19:45")
        );
        assert_eq!(as_input_value("text", "14 March 2027"), None);
        assert!(same_value("date", "2027-03-14", "14 March 2027"));
        assert!(!same_value("date", "2027-03-15", "14 March 2027"));
        assert!(same_value("text", "Lyon", " Lyon"));
    }
}
