//! GGUF (v2 and v3, little-endian): the file format of llama.cpp. `Gguf::parse` reads the
//! header, the metadata and the tensor directory, checking every length against the file, so
//! that no input makes it panic or allocate more than the file holds; `Gguf::read` dequantizes
//! one tensor to f32 (`dequant`), for the types attnlab reads (`GgmlType::READ`).
//!
//! Tensor shapes are given row-major (as PyTorch has them): the file lists a tensor's
//! dimensions innermost first, and they are reversed here.

use std::collections::BTreeMap;

use crate::error::{Error, Result};

pub mod dequant;
mod ggml_type;
pub mod tokenizer;

pub use ggml_type::GgmlType;

/// A metadata value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    U8(u8),
    I8(i8),
    U16(u16),
    I16(i16),
    U32(u32),
    I32(i32),
    F32(f32),
    Bool(bool),
    Str(String),
    Array(Vec<Value>),
    U64(u64),
    I64(i64),
    F64(f64),
}

impl Value {
    /// A non-negative integer of any width.
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            Value::U8(x) => Some(x.into()),
            Value::U16(x) => Some(x.into()),
            Value::U32(x) => Some(x.into()),
            Value::U64(x) => Some(x),
            Value::I8(x) => u64::try_from(x).ok(),
            Value::I16(x) => u64::try_from(x).ok(),
            Value::I32(x) => u64::try_from(x).ok(),
            Value::I64(x) => u64::try_from(x).ok(),
            _ => None,
        }
    }

    /// A float (of either width).
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Value::F32(x) => Some(x.into()),
            Value::F64(x) => Some(x),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }
}

/// Where a tensor is in the file and what it holds.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorInfo {
    pub name: String,
    /// Row-major (the file's dimensions reversed).
    pub shape: Vec<usize>,
    pub ty: GgmlType,
    /// Its bytes: `bytes[start..start + len]` of the file.
    pub start: usize,
    pub len: usize,
}

impl TensorInfo {
    pub fn elements(&self) -> usize {
        self.shape.iter().product()
    }
}

/// Where a GGUF file's tensor bytes come from: the whole file in memory (`[u8]`, `Vec<u8>`), or
/// a source that hands out one tensor's bytes at a time (the page's CPU worker copies them out
/// of the JS array it was sent, so the file is never in its memory whole).
pub trait TensorBytes {
    /// The bytes of tensor `t` (`t.start .. t.start + t.len` of the file), or None when the
    /// source does not hold them.
    fn tensor_bytes(&self, t: &TensorInfo) -> Option<std::borrow::Cow<'_, [u8]>>;
}

impl TensorBytes for [u8] {
    fn tensor_bytes(&self, t: &TensorInfo) -> Option<std::borrow::Cow<'_, [u8]>> {
        self.get(t.start..t.start.checked_add(t.len)?)
            .map(std::borrow::Cow::Borrowed)
    }
}

impl TensorBytes for Vec<u8> {
    fn tensor_bytes(&self, t: &TensorInfo) -> Option<std::borrow::Cow<'_, [u8]>> {
        self.as_slice().tensor_bytes(t)
    }
}

/// A GGUF file's header, metadata and tensor directory (the tensors stay in the file's bytes).
#[derive(Clone, Debug)]
pub struct Gguf {
    pub version: u32,
    pub metadata: BTreeMap<String, Value>,
    pub tensors: Vec<TensorInfo>,
}

/// The most dimensions a tensor has (ggml's limit), and the deepest array of arrays read.
const MAX_DIMS: usize = 4;
const MAX_DEPTH: usize = 4;

fn bad(message: impl Into<String>) -> Error {
    Error::Gguf(message.into())
}

/// Reads the file front to back; every read checks that the bytes are there. `bytes` may be
/// the file's first part only (`Gguf::parse_head`); counts are checked against the whole
/// file's length, `file_len`.
struct Cursor<'a> {
    bytes: &'a [u8],
    file_len: usize,
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| {
                bad(format!(
                    "the file ends inside {what} (at byte {} of {})",
                    self.at,
                    self.bytes.len()
                ))
            })?;
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N]> {
        Ok(self.take(N, what)?.try_into().expect("N bytes"))
    }

    fn u32(&mut self, what: &str) -> Result<u32> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }

    fn u64(&mut self, what: &str) -> Result<u64> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }

    /// A count of things each at least `min_size` bytes long: never more than the rest of
    /// the file could hold.
    fn count(&mut self, min_size: usize, what: &str) -> Result<usize> {
        let n = self.u64(what)?;
        let left = self.file_len.saturating_sub(self.at) as u64;
        if n.saturating_mul(min_size.max(1) as u64) > left {
            return Err(bad(format!(
                "{what} says {n}, more than the {left} bytes left in the file hold"
            )));
        }
        Ok(n as usize)
    }

    fn string(&mut self, what: &str) -> Result<String> {
        let n = self.count(1, what)?;
        let b = self.take(n, what)?;
        // tokens of a byte-level vocabulary are valid UTF-8; a file that is not is refused
        String::from_utf8(b.to_vec()).map_err(|_| bad(format!("{what} is not UTF-8")))
    }

    fn value(&mut self, ty: u32, key: &str, depth: usize) -> Result<Value> {
        let what = format!("the value of `{key}`");
        Ok(match ty {
            0 => Value::U8(self.array::<1>(&what)?[0]),
            1 => Value::I8(self.array::<1>(&what)?[0] as i8),
            2 => Value::U16(u16::from_le_bytes(self.array(&what)?)),
            3 => Value::I16(i16::from_le_bytes(self.array(&what)?)),
            4 => Value::U32(self.u32(&what)?),
            5 => Value::I32(i32::from_le_bytes(self.array(&what)?)),
            6 => Value::F32(f32::from_le_bytes(self.array(&what)?)),
            7 => match self.array::<1>(&what)?[0] {
                0 => Value::Bool(false),
                1 => Value::Bool(true),
                b => return Err(bad(format!("`{key}` is a bool of value {b}"))),
            },
            8 => Value::Str(self.string(&what)?),
            9 => {
                if depth >= MAX_DEPTH {
                    return Err(bad(format!("`{key}` nests arrays deeper than {MAX_DEPTH}")));
                }
                let inner = self.u32(&what)?;
                let n = self.count(1, &what)?;
                let mut items = Vec::with_capacity(n.min(1 << 16));
                for _ in 0..n {
                    items.push(self.value(inner, key, depth + 1)?);
                }
                Value::Array(items)
            }
            10 => Value::U64(self.u64(&what)?),
            11 => Value::I64(i64::from_le_bytes(self.array(&what)?)),
            12 => Value::F64(f64::from_le_bytes(self.array(&what)?)),
            t => {
                return Err(bad(format!(
                    "`{key}` has value type {t}, which GGUF does not define"
                )))
            }
        })
    }
}

impl Gguf {
    /// Reads a GGUF file's header, metadata and tensor directory, and checks that every
    /// tensor lies inside the file.
    pub fn parse(bytes: &[u8]) -> Result<Gguf> {
        Gguf::parse_head(bytes, bytes.len())
    }

    /// `parse` from the file's first bytes (`head`) and its length: the page reads a model's
    /// tokenizer and hyperparameters without copying its weights. A `head` too short for
    /// the directory fails as a truncated file would.
    pub fn parse_head(head: &[u8], file_len: usize) -> Result<Gguf> {
        let bytes = head;
        let file_len = file_len.max(head.len());
        let mut c = Cursor {
            bytes,
            file_len,
            at: 0,
        };
        if c.take(4, "the magic number").ok() != Some(b"GGUF") {
            return Err(bad("not a GGUF file (it does not start with `GGUF`)"));
        }
        let version = c.u32("the version")?;
        if version & 0xFFFF == 0 {
            return Err(bad(
                "a big-endian GGUF file; only little-endian files are read",
            ));
        }
        if !(2..=3).contains(&version) {
            return Err(bad(format!(
                "GGUF version {version}; versions 2 and 3 are read"
            )));
        }
        // a tensor's directory entry is at least 28 bytes; a key-value at least 13
        let n_tensors = c.count(28, "the tensor count")?;
        let n_kv = c.count(13, "the metadata count")?;
        let mut metadata = BTreeMap::new();
        for _ in 0..n_kv {
            let key = c.string("a metadata key")?;
            let ty = c.u32("a metadata type")?;
            let value = c.value(ty, &key, 0)?;
            if metadata.insert(key.clone(), value).is_some() {
                return Err(bad(format!("the metadata key `{key}` is there twice")));
            }
        }
        let alignment = match metadata.get("general.alignment") {
            None => 32,
            Some(Value::U32(a)) if a.is_power_of_two() => *a as usize,
            Some(v) => {
                return Err(bad(format!(
                    "general.alignment is {v:?}; a power of two (u32) is needed"
                )))
            }
        };
        let mut infos = Vec::with_capacity(n_tensors);
        for _ in 0..n_tensors {
            let name = c.string("a tensor name")?;
            let n_dims = c.u32("a tensor's dimension count")? as usize;
            if n_dims > MAX_DIMS {
                return Err(bad(format!(
                    "tensor `{name}` has {n_dims} dimensions (at most {MAX_DIMS})"
                )));
            }
            let mut dims = Vec::with_capacity(n_dims);
            for _ in 0..n_dims {
                dims.push(c.u64("a tensor dimension")?);
            }
            let ty = GgmlType(c.u32("a tensor type")?);
            let offset = c.u64("a tensor offset")?;
            infos.push((name, dims, ty, offset));
        }
        let data_start = c.at.div_ceil(alignment) * alignment;
        let mut tensors = Vec::with_capacity(infos.len());
        for (name, dims, ty, offset) in infos {
            tensors.push(Self::place(
                file_len, data_start, alignment, name, dims, ty, offset,
            )?);
        }
        let mut names: Vec<&str> = tensors.iter().map(|t| t.name.as_str()).collect();
        names.sort_unstable();
        if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
            return Err(bad(format!("the tensor `{}` is there twice", w[0])));
        }
        Ok(Gguf {
            version,
            metadata,
            tensors,
        })
    }

    /// Checks one directory entry against the file and says where its bytes are.
    fn place(
        file_len: usize,
        data_start: usize,
        alignment: usize,
        name: String,
        dims: Vec<u64>,
        ty: GgmlType,
        offset: u64,
    ) -> Result<TensorInfo> {
        let Some((block, size)) = ty.block() else {
            return Err(bad(format!(
                "tensor `{name}` has {}, which is not a known tensor type",
                ty.name()
            )));
        };
        let elements = dims
            .iter()
            .try_fold(1u64, |n, &d| n.checked_mul(d))
            .filter(|&n| n <= file_len as u64 * 8)
            .ok_or_else(|| {
                bad(format!(
                    "tensor `{name}` has dimensions {dims:?}, more than the file holds"
                ))
            })?;
        let row = dims.first().copied().unwrap_or(1);
        if !row.is_multiple_of(block as u64) {
            return Err(bad(format!(
                "tensor `{name}`: its rows of {row} values are not whole blocks of {block} ({})",
                ty.name()
            )));
        }
        let len = elements / block as u64 * size as u64;
        let start = (data_start as u64).checked_add(offset);
        let fits = start
            .and_then(|s| s.checked_add(len))
            .is_some_and(|e| e <= file_len as u64);
        if !offset.is_multiple_of(alignment as u64) || !fits {
            return Err(bad(format!(
                "tensor `{name}` ({len} bytes at offset {offset}) lies outside the file or off its alignment ({alignment})"
            )));
        }
        Ok(TensorInfo {
            name,
            shape: dims.iter().rev().map(|&d| d as usize).collect(),
            ty,
            start: start.expect("checked") as usize,
            len: len as usize,
        })
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        self.metadata.get(key)
    }

    pub fn tensor(&self, name: &str) -> Option<&TensorInfo> {
        self.tensors.iter().find(|t| t.name == name)
    }

    /// The values of tensor `t` (from the file's `bytes`) as f32, row-major.
    pub fn read(&self, bytes: &(impl TensorBytes + ?Sized), t: &TensorInfo) -> Result<Vec<f32>> {
        if !t.ty.is_read() {
            return Err(bad(format!(
                "tensor `{}` is {}; attnlab reads {}",
                t.name,
                t.ty.name(),
                GgmlType::READ.map(|t| t.name()).join(", ")
            )));
        }
        let raw = bytes
            .tensor_bytes(t)
            .ok_or_else(|| bad(format!("tensor `{}` lies outside these bytes", t.name)))?;
        let mut out = vec![0f32; t.elements()];
        dequant::dequantize(t.ty, &raw, &mut out);
        Ok(out)
    }
}
