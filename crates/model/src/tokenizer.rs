//! The Hugging Face `tokenizers` tokenizer, plus a readable display string and the input
//! character span for every token.
//!
//! Byte-level BPE (GPT-2) can split one UTF-8 character over several tokens: every Hangul
//! syllable is 3 bytes, and a token may hold only one or two of them. Such a token is shown
//! as the whole character with the bytes it holds, e.g. `산‹1-2/3›` and `산‹3/3›`,
//! never as "�".

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use tokenizers::{DecoderWrapper, PreTokenizerWrapper};

use crate::error::{Error, Result};

/// One token of an input text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenInfo {
    pub id: u32,
    /// The vocabulary entry as stored in tokenizer.json.
    pub piece: String,
    /// A readable form: whitespace and control characters made visible, split
    /// characters shown whole with the bytes this token holds.
    pub display: String,
    /// Character offsets `[start, end)` into the input text.
    pub span: (usize, usize),
    /// True when the token holds only part of a character.
    pub partial: bool,
}

/// A loaded tokenizer.
pub struct Tokenizer {
    inner: tokenizers::Tokenizer,
    byte_level: bool,
}

impl std::fmt::Debug for Tokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokenizer")
            .field("vocab_size", &self.vocab_size())
            .field("byte_level", &self.byte_level)
            .finish()
    }
}

impl Tokenizer {
    /// Parses the bytes of a `tokenizer.json`.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let inner = tokenizers::Tokenizer::from_bytes(bytes)
            .map_err(|e| Error::Tokenizer(e.to_string()))?;
        let byte_level = matches!(inner.get_decoder(), Some(DecoderWrapper::ByteLevel(_)))
            || matches!(
                inner.get_pre_tokenizer(),
                Some(PreTokenizerWrapper::ByteLevel(_))
            );
        Ok(Tokenizer { inner, byte_level })
    }

    /// Number of ids, added tokens included.
    pub fn vocab_size(&self) -> usize {
        self.inner.get_vocab_size(true)
    }

    /// Whether pieces are GPT-2 byte-level strings.
    pub fn is_byte_level(&self) -> bool {
        self.byte_level
    }

    /// The underlying Hugging Face tokenizer.
    pub fn inner(&self) -> &tokenizers::Tokenizer {
        &self.inner
    }

    /// Tokenizes `text`, with the special tokens the tokenizer's template puts before it (a
    /// BOS token, for a Llama 3 tokenizer; its span is empty, at 0), as transformers'
    /// `tokenizer(text)` and llama.cpp do. A template's tokens after the text (an EOS, a
    /// `[SEP]`) are left out: the text is one to continue.
    pub fn encode(&self, text: &str) -> Result<Vec<TokenInfo>> {
        let mut tokens = self.encode_with_template(text)?;
        // template tokens have an empty span at 0; every token of the text spans a character
        let last_of_text = tokens.iter().rposition(|t| t.span.1 > t.span.0);
        tokens.truncate(last_of_text.map_or(tokens.len().min(1), |k| k + 1));
        Ok(tokens)
    }

    fn encode_with_template(&self, text: &str) -> Result<Vec<TokenInfo>> {
        let enc = self
            .inner
            .encode_char_offsets(text, true)
            .map_err(|e| Error::Tokenizer(e.to_string()))?;
        let pieces = enc.get_tokens();
        let bytes: Vec<Vec<u8>> = pieces.iter().map(|p| self.piece_bytes(p)).collect();
        let displays = display_strings(&bytes);
        Ok(enc
            .get_ids()
            .iter()
            .zip(pieces)
            .zip(enc.get_offsets())
            .zip(displays)
            .map(|(((&id, piece), &span), (display, partial))| TokenInfo {
                id,
                piece: piece.clone(),
                display,
                span,
                partial,
            })
            .collect())
    }

    /// `text` followed by the tokens `appended` (a generation's output): the whole text and
    /// its tokens — `text`'s own tokens as `encode` gives them, then exactly `appended`, with
    /// spans into the returned text. The appended tokens' bytes become characters; a byte
    /// that is no whole character yet (a generation that stopped inside one) is U+FFFD.
    pub fn continue_with(&self, text: &str, appended: &[u32]) -> Result<(String, Vec<TokenInfo>)> {
        let mut tokens = self.encode(text)?;
        if appended.is_empty() {
            return Ok((text.to_string(), tokens));
        }
        let Spelled {
            pieces,
            bytes,
            units,
        } = self.spelled(appended)?;
        let mut full = text.to_string();
        full.extend(units.iter().map(Unit::char));
        let base = text.chars().count();
        // the unit holding byte `b` of the appended bytes
        let unit_at = |b: usize| units.partition_point(|u| u.start + u.len <= b);
        let mut at = 0;
        for (((&id, piece), b), (display, partial)) in appended
            .iter()
            .zip(pieces)
            .zip(&bytes)
            .zip(display_strings(&bytes))
        {
            let (start, end) = if b.is_empty() {
                let u = unit_at(at);
                (u, u)
            } else {
                (unit_at(at), unit_at(at + b.len() - 1) + 1)
            };
            tokens.push(TokenInfo {
                id,
                piece,
                display,
                span: (base + start, base + end),
                partial,
            });
            at += b.len();
        }
        Ok((full, tokens))
    }

    /// The text the tokens `ids` spell, one after another (a generation's appended tokens; a
    /// byte that is no whole character yet is U+FFFD) — `continue_with`'s text without
    /// tokenizing anything.
    pub fn spell(&self, ids: &[u32]) -> Result<String> {
        Ok(self.spelled(ids)?.units.iter().map(Unit::char).collect())
    }

    /// Each id's piece and bytes, and the characters their bytes make together.
    fn spelled(&self, ids: &[u32]) -> Result<Spelled> {
        let pieces: Vec<String> = ids
            .iter()
            .map(|&id| {
                self.inner
                    .id_to_token(id)
                    .ok_or_else(|| Error::Tokenizer(format!("no token with id {id}")))
            })
            .collect::<Result<_>>()?;
        let bytes: Vec<Vec<u8>> = pieces.iter().map(|p| self.piece_bytes(p)).collect();
        let units = units(&bytes.concat());
        Ok(Spelled {
            pieces,
            bytes,
            units,
        })
    }

    /// Token ids of `text`.
    pub fn ids(&self, text: &str) -> Result<Vec<u32>> {
        Ok(self.encode(text)?.into_iter().map(|t| t.id).collect())
    }

    /// A readable form of a single id out of context (for next-token lists).
    pub fn display_id(&self, id: u32) -> String {
        match self.inner.id_to_token(id) {
            Some(piece) => display_strings(&[self.piece_bytes(&piece)]).remove(0).0,
            None => format!("‹id {id}›"),
        }
    }

    /// Ids a probe text may be drawn from: every vocabulary entry that is not a special
    /// (added) token, stands for at least two bytes of whole UTF-8 characters (no single-byte
    /// base or byte-fallback token, no part of a character), and holds no control character.
    pub fn probe_candidates(&self) -> Vec<u32> {
        let added = self.inner.get_added_tokens_decoder();
        let mut ids: Vec<u32> = self
            .inner
            .get_vocab(false)
            .into_iter()
            .filter(|(piece, id)| {
                if added.contains_key(id) || byte_fallback(piece).is_some() {
                    return false;
                }
                let bytes = self.piece_bytes(piece);
                bytes.len() >= 2
                    && std::str::from_utf8(&bytes).is_ok_and(|s| !s.chars().any(char::is_control))
            })
            .map(|(_, id)| id)
            .collect();
        ids.sort_unstable();
        ids
    }

    /// The bytes a vocabulary entry stands for.
    pub fn piece_bytes(&self, piece: &str) -> Vec<u8> {
        if let Some(b) = byte_fallback(piece) {
            return vec![b];
        }
        if self.byte_level {
            piece
                .chars()
                .flat_map(|c| match byte_level_decode(c) {
                    Some(b) => vec![b],
                    None => c.to_string().into_bytes(),
                })
                .collect()
        } else {
            piece.replace('\u{2581}', " ").into_bytes()
        }
    }
}

/// `<0xAB>` byte-fallback pieces.
fn byte_fallback(piece: &str) -> Option<u8> {
    let hex = piece.strip_prefix("<0x")?.strip_suffix('>')?;
    (hex.len() == 2).then(|| u8::from_str_radix(hex, 16).ok())?
}

/// Inverse of GPT-2's `bytes_to_unicode`: printable Latin-1 bytes stand for themselves,
/// the other 68 bytes are shifted to U+0100…U+0143 in byte order.
fn byte_level_decode(c: char) -> Option<u8> {
    let printable = |b: u32| {
        (0x21..=0x7E).contains(&b) || (0xA1..=0xAC).contains(&b) || (0xAE..=0xFF).contains(&b)
    };
    let u = c as u32;
    if u < 0x100 {
        return printable(u).then_some(u as u8);
    }
    let n = u - 0x100;
    (0u32..=255)
        .filter(|&b| !printable(b))
        .nth(n as usize)
        .map(|b| b as u8)
}

/// Makes whitespace and control characters visible.
pub fn visible(c: char, out: &mut String) {
    match c {
        ' ' => out.push('␣'),
        '\n' => out.push('⏎'),
        '\t' => out.push('⇥'),
        '\r' => out.push('␍'),
        '\u{7f}' => out.push('␡'),
        c if (c as u32) < 0x20 => out.push(char::from_u32(0x2400 + c as u32).unwrap_or('?')),
        c => out.push(c),
    }
}

/// A decoded unit of the concatenated token bytes: a character, or a byte that is not
/// part of any valid UTF-8 sequence.
struct Unit {
    start: usize,
    len: usize,
    ch: Option<char>,
}

/// Tokens spelled out: each one's piece and bytes, and the characters of all their bytes.
struct Spelled {
    pieces: Vec<String>,
    bytes: Vec<Vec<u8>>,
    units: Vec<Unit>,
}

impl Unit {
    /// The character, or U+FFFD for a byte of no valid character.
    fn char(&self) -> char {
        self.ch.unwrap_or('\u{fffd}')
    }
}

fn units(all: &[u8]) -> Vec<Unit> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < all.len() {
        let (valid, bad) = match std::str::from_utf8(&all[pos..]) {
            Ok(s) => (s, 0),
            Err(e) => {
                let s =
                    std::str::from_utf8(&all[pos..pos + e.valid_up_to()]).expect("valid prefix");
                (
                    s,
                    e.error_len().unwrap_or(all.len() - pos - e.valid_up_to()),
                )
            }
        };
        for (i, ch) in valid.char_indices() {
            out.push(Unit {
                start: pos + i,
                len: ch.len_utf8(),
                ch: Some(ch),
            });
        }
        pos += valid.len();
        for b in 0..bad {
            out.push(Unit {
                start: pos + b,
                len: 1,
                ch: None,
            });
        }
        pos += bad;
    }
    out
}

/// Display strings for a sequence of tokens given the bytes each stands for.
/// Returns (display, partial) per token.
pub fn display_strings(tokens: &[Vec<u8>]) -> Vec<(String, bool)> {
    let all: Vec<u8> = tokens.concat();
    let units = units(&all);
    let mut out = Vec::with_capacity(tokens.len());
    let mut start = 0;
    let mut u = 0; // first unit that may overlap the current token
    for tok in tokens {
        let end = start + tok.len();
        let (mut s, mut partial) = (String::new(), false);
        while u < units.len() && units[u].start + units[u].len <= start {
            u += 1;
        }
        let mut j = u;
        while j < units.len() && units[j].start < end {
            let unit = &units[j];
            let (a, b) = (start.max(unit.start), end.min(unit.start + unit.len));
            match unit.ch {
                Some(c) if a == unit.start && b == unit.start + unit.len => visible(c, &mut s),
                Some(c) => {
                    partial = true;
                    let (i, k) = (a - unit.start + 1, b - unit.start);
                    visible(c, &mut s);
                    if i == k {
                        let _ = write!(s, "‹{i}/{}›", unit.len);
                    } else {
                        let _ = write!(s, "‹{i}-{k}/{}›", unit.len);
                    }
                }
                None => {
                    partial = true;
                    let _ = write!(s, "‹0x{:02X}›", all[unit.start]);
                }
            }
            j += 1;
        }
        out.push((s, partial));
        start = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A template's tokens before the text stay (a BOS), those after it go (an EOS, a
    /// `[SEP]`): the text is one to continue. An empty text is the first of them alone.
    #[test]
    fn a_templates_tokens_after_the_text_are_left_out() {
        let json = r#"{"version": "1.0", "added_tokens": [
            {"id": 0, "content": "[CLS]", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
            {"id": 1, "content": "[SEP]", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true}],
          "normalizer": null, "pre_tokenizer": {"type": "WhitespaceSplit"},
          "post_processor": {"type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
            "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {"[CLS]": {"id": "[CLS]", "ids": [0], "tokens": ["[CLS]"]}, "[SEP]": {"id": "[SEP]", "ids": [1], "tokens": ["[SEP]"]}}},
          "decoder": null,
          "model": {"type": "WordLevel", "vocab": {"[CLS]": 0, "[SEP]": 1, "a": 2, "b": 3, "[UNK]": 4}, "unk_token": "[UNK]"}}"#;
        let tok = Tokenizer::from_bytes(json.as_bytes()).unwrap();
        let ids = |text: &str| -> Vec<u32> { tok.ids(text).unwrap() };
        assert_eq!(ids("a b"), [0, 2, 3]);
        assert_eq!(ids(""), [0]);
        // the template adds them: the underlying encoding has both
        assert_eq!(
            tok.inner().encode("a b", true).unwrap().get_ids(),
            [0, 2, 3, 1]
        );
    }

    #[test]
    fn byte_level_table_inverts_gpt2() {
        assert_eq!(byte_level_decode('Ġ'), Some(b' '));
        assert_eq!(byte_level_decode('Ċ'), Some(b'\n'));
        assert_eq!(byte_level_decode('A'), Some(b'A'));
        assert_eq!(byte_level_decode('Ā'), Some(0));
        assert_eq!(byte_level_decode('ì'), Some(0xEC));
        assert_eq!(byte_level_decode('ł'), Some(0xA0));
        assert_eq!(byte_level_decode('Ń'), Some(0xAD));
        assert_eq!(byte_level_decode('가'), None);
    }

    #[test]
    fn split_hangul_is_shown_whole_with_its_bytes() {
        let san = "산".as_bytes();
        let toks = vec![
            " ".as_bytes().to_vec(),
            san[..2].to_vec(),
            san[2..].to_vec(),
            b"ok".to_vec(),
        ];
        let d = display_strings(&toks);
        assert_eq!(d[0], ("␣".to_string(), false));
        assert_eq!(d[1], ("산‹1-2/3›".to_string(), true));
        assert_eq!(d[2], ("산‹3/3›".to_string(), true));
        assert_eq!(d[3], ("ok".to_string(), false));
        // a lone invalid byte is named, never U+FFFD
        let d = display_strings(&[vec![0xFF, b'a']]);
        assert_eq!(d[0], ("‹0xFF›a".to_string(), true));
        assert!(d.iter().all(|(s, _)| !s.contains('\u{FFFD}')));
    }

    #[test]
    fn probe_candidates_are_whole_multi_byte_pieces() {
        use crate::testing::{byte_level_tokenizer_json, char_bpe_tokenizer_json};
        // byte-level: the 256 byte tokens and the half of 산 are left out
        let tok =
            Tokenizer::from_bytes(byte_level_tokenizer_json(&["커피", " tea"], &["산"]).as_bytes())
                .unwrap();
        let shown: Vec<String> = tok
            .probe_candidates()
            .iter()
            .map(|&id| tok.display_id(id))
            .collect();
        assert!(
            shown.contains(&"커피".to_string()) && shown.contains(&"␣tea".to_string()),
            "{shown:?}"
        );
        assert!(
            shown.iter().all(|s| !s.contains('‹')),
            "no partial character: {shown:?}"
        );
        assert!(tok.probe_candidates().iter().all(|&id| id >= 256));
        // byte fallback: the <0xNN> tokens are left out, whole syllables stay
        let tok = Tokenizer::from_bytes(char_bpe_tokenizer_json("가나a").as_bytes()).unwrap();
        let shown: Vec<String> = tok
            .probe_candidates()
            .iter()
            .map(|&id| tok.display_id(id))
            .collect();
        assert_eq!(shown, ["가", "나"]);
    }
}
