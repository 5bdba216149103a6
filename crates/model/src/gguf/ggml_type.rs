//! The tensor types a GGUF file may hold (ggml's type ids), how many elements a block of each
//! holds and in how many bytes, and which of them attnlab reads.

/// A ggml tensor type, by its id in the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GgmlType(pub u32);

/// (id, name, elements per block, bytes per block). Ids absent here (removed types, or newer
/// than this table) are unknown: a file holding one cannot be read past it.
const TYPES: &[(u32, &str, usize, usize)] = &[
    (0, "F32", 1, 4),
    (1, "F16", 1, 2),
    (2, "Q4_0", 32, 18),
    (3, "Q4_1", 32, 20),
    (6, "Q5_0", 32, 22),
    (7, "Q5_1", 32, 24),
    (8, "Q8_0", 32, 34),
    (9, "Q8_1", 32, 36),
    (10, "Q2_K", 256, 84),
    (11, "Q3_K", 256, 110),
    (12, "Q4_K", 256, 144),
    (13, "Q5_K", 256, 176),
    (14, "Q6_K", 256, 210),
    (15, "Q8_K", 256, 292),
    (16, "IQ2_XXS", 256, 66),
    (17, "IQ2_XS", 256, 74),
    (18, "IQ3_XXS", 256, 98),
    (19, "IQ1_S", 256, 50),
    (20, "IQ4_NL", 32, 18),
    (21, "IQ3_S", 256, 110),
    (22, "IQ2_S", 256, 82),
    (23, "IQ4_XS", 256, 136),
    (24, "I8", 1, 1),
    (25, "I16", 1, 2),
    (26, "I32", 1, 4),
    (27, "I64", 1, 8),
    (28, "F64", 1, 8),
    (29, "IQ1_M", 256, 56),
    (30, "BF16", 1, 2),
    (34, "TQ1_0", 256, 54),
    (35, "TQ2_0", 256, 66),
    (39, "MXFP4", 32, 17),
];

impl GgmlType {
    pub const F32: GgmlType = GgmlType(0);
    pub const F16: GgmlType = GgmlType(1);
    pub const Q4_0: GgmlType = GgmlType(2);
    pub const Q4_1: GgmlType = GgmlType(3);
    pub const Q5_0: GgmlType = GgmlType(6);
    pub const Q5_1: GgmlType = GgmlType(7);
    pub const Q8_0: GgmlType = GgmlType(8);
    pub const Q4_K: GgmlType = GgmlType(12);
    pub const Q5_K: GgmlType = GgmlType(13);
    pub const Q6_K: GgmlType = GgmlType(14);
    pub const BF16: GgmlType = GgmlType(30);

    /// The types attnlab reads (dequantizes); any other is refused by name.
    pub const READ: [GgmlType; 11] = [
        GgmlType::F32,
        GgmlType::F16,
        GgmlType::BF16,
        GgmlType::Q4_0,
        GgmlType::Q4_1,
        GgmlType::Q5_0,
        GgmlType::Q5_1,
        GgmlType::Q8_0,
        GgmlType::Q4_K,
        GgmlType::Q5_K,
        GgmlType::Q6_K,
    ];

    fn entry(self) -> Option<&'static (u32, &'static str, usize, usize)> {
        TYPES.iter().find(|t| t.0 == self.0)
    }

    /// ggml's name ("Q4_K"), or "type N" for an id this table does not know.
    pub fn name(self) -> String {
        self.entry()
            .map_or_else(|| format!("type {}", self.0), |t| t.1.to_string())
    }

    /// (elements per block, bytes per block), for a known type.
    pub fn block(self) -> Option<(usize, usize)> {
        self.entry().map(|t| (t.2, t.3))
    }

    /// Whether attnlab reads tensors of this type.
    pub fn is_read(self) -> bool {
        GgmlType::READ.contains(&self)
    }

    /// Whether the type is one of the block-quantized ones (not a plain float).
    pub fn is_quantized(self) -> bool {
        self.block().is_some_and(|(n, _)| n > 1)
    }
}
