//! Values read off the page for a question: prices, counts, dates, times and names, found in
//! the text around the entity the question is about.

use std::sync::LazyLock;

use regex::Regex;

use super::goal::AnswerKind;

static PRICE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:[€$£¥]\s?\d[\d,]*(?:\.\d{1,2})?|\d[\d,]*(?:[.,]\d{1,2})?\s?(?:EUR|USD|GBP|CHF|€|\$|£|kr))").unwrap()
});
static DATE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}/\d{2,4}|\d{1,2}\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{4}|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{1,2},?\s+\d{4})\b").unwrap()
});
static TIME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)\b\d{1,2}:\d{2}(?:\s?[ap]\.?m\.?)?").unwrap());
static COUNT: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\b\d+\b").unwrap());
static LABELLED_NAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:from|by|author|sender|owner|assignee|assigned to|contact|name)\s*:?\s+([A-Z][\w'’-]+(?:\s+[A-Z][\w'’-]+){0,2})").unwrap()
});

/// The values of `kind` in `text`, in order.
pub fn values(text: &str, kind: AnswerKind) -> Vec<String> {
    let found = |r: &Regex| -> Vec<String> {
        r.find_iter(text)
            .map(|m| m.as_str().trim().to_owned())
            .collect()
    };
    match kind {
        AnswerKind::Price => found(&PRICE),
        AnswerKind::Date => found(&DATE),
        AnswerKind::Time => found(&TIME),
        AnswerKind::Count => {
            // Numbers that are not part of a price, a date or a time.
            let mut masked = text.to_owned();
            for r in [&*PRICE, &*DATE, &*TIME] {
                masked = r
                    .replace_all(&masked, |c: &regex::Captures| " ".repeat(c[0].len()))
                    .into_owned();
            }
            COUNT
                .find_iter(&masked)
                .map(|m| m.as_str().to_owned())
                .collect()
        }
        AnswerKind::Name => LABELLED_NAME
            .captures_iter(text)
            .map(|c| c[1].to_owned())
            .collect(),
        AnswerKind::Any => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_finds_its_values_and_counts_skip_the_others() {
        assert_eq!(
            values("Wool socks 12.90 EUR, was €15.00", AnswerKind::Price),
            ["12.90 EUR", "€15.00"]
        );
        assert_eq!(
            values("Due 2026-03-14, sent 4 Mar 2026", AnswerKind::Date),
            ["2026-03-14", "4 Mar 2026"]
        );
        assert_eq!(
            values("12.90 EUR · 14 in stock · 2026-03-14", AnswerKind::Count),
            ["14"]
        );
        assert_eq!(
            values("From: Maria Lopez", AnswerKind::Name),
            ["Maria Lopez"]
        );
    }
}
