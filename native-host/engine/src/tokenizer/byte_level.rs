//! GPT-2's byte-to-character mapping.
//!
//! Byte-level BPE vocabularies spell every byte as a printable character so that token texts are
//! valid UTF-8 strings without spaces or control characters: printable Latin-1 bytes stand for
//! themselves, the other 68 bytes map to U+0100 onwards (a space is `Ġ`, a newline `Ċ`).

use std::sync::OnceLock;

struct Tables {
    to_char: [char; 256],
    to_byte: std::collections::HashMap<char, u8>,
}

fn tables() -> &'static Tables {
    static TABLES: OnceLock<Tables> = OnceLock::new();
    TABLES.get_or_init(|| {
        let printable = |b: u8| matches!(b, b'!'..=b'~' | 0xa1..=0xac | 0xae..=0xff);
        let mut to_char = ['\0'; 256];
        let mut next = 256u32;
        for b in 0..=255u8 {
            to_char[b as usize] = if printable(b) {
                char::from(b)
            } else {
                let c = char::from_u32(next).expect("U+0100.. are chars");
                next += 1;
                c
            };
        }
        let to_byte = to_char
            .iter()
            .enumerate()
            .map(|(b, &c)| (c, b as u8))
            .collect();
        Tables { to_char, to_byte }
    })
}

pub(crate) fn byte_to_char(b: u8) -> char {
    tables().to_char[b as usize]
}

pub(crate) fn char_to_byte(c: char) -> Option<u8> {
    tables().to_byte.get(&c).copied()
}

/// The byte-level spelling of `text`'s UTF-8 bytes.
pub(crate) fn encode(text: &str) -> String {
    text.bytes().map(byte_to_char).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_gpt2() {
        assert_eq!(byte_to_char(b' '), 'Ġ');
        assert_eq!(byte_to_char(b'\n'), 'Ċ');
        assert_eq!(byte_to_char(b'a'), 'a');
        assert_eq!(byte_to_char(0xad), 'Ń');
        assert_eq!(encode("é"), "Ã©");
        for b in 0..=255u8 {
            assert_eq!(char_to_byte(byte_to_char(b)), Some(b));
        }
        assert_eq!(char_to_byte('€'), None);
    }
}
