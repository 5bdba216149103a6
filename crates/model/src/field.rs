//! The sizes of a trace ([`Dims`]) and the fields of a block's trace, declared once: `trace.rs` lists them in a
//! [`layer_fields!`] table, and the table gives the [`LayerTrace`](crate::LayerTrace) struct,
//! the [`Field`](crate::Field) enum (every field by name, in the order of the forward pass,
//! with its [`Shape`]) and the accessors both engines, the wire and the readback use. Adding a
//! field is one line of the table; nothing else spells the list out.

use serde::{Deserialize, Serialize};

use crate::config::{Config, LnPlacement};

/// Sizes of the arrays in a Trace.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Dims {
    /// Tokens run (after truncation to the context).
    pub t: usize,
    pub d_model: usize,
    pub n_head: usize,
    pub d_k: usize,
    pub d_ff: usize,
    pub n_layer: usize,
    pub vocab: usize,
    pub ln_placement: LnPlacement,
}

impl Dims {
    /// The sizes of a trace of `t` tokens through a model with `config`.
    pub fn new(config: &Config, t: usize) -> Self {
        Dims {
            t,
            d_model: config.n_embd,
            n_head: config.n_head,
            d_k: config.d_k(),
            d_ff: config.d_ff(),
            n_layer: config.n_layer,
            vocab: config.vocab_size,
            ln_placement: config.ln_placement,
        }
    }
}

/// How many values a row of a row-major field holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Width {
    /// d_model
    Model,
    /// The FFN's hidden width.
    Ffn,
}

/// The shape of a field, with T = tokens run, D = d_model, H = heads, Dk = d_k, F = FFN width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Row-major (T, width): the residual stream and what is computed from it row by row.
    Rows(Width),
    /// Per head, (H, T, Dk): queries, keys, values, head outputs.
    Heads,
    /// Per head, (H, T, T): one entry per (query, key) pair.
    Square,
}

impl Shape {
    /// Values in a field of this shape for a trace of `dims`.
    pub fn len(self, dims: &Dims) -> usize {
        let t = dims.t;
        match self {
            Shape::Rows(Width::Model) => t * dims.d_model,
            Shape::Rows(Width::Ffn) => t * dims.d_ff,
            Shape::Heads => dims.n_head * t * dims.d_k,
            Shape::Square => dims.n_head * t * t,
        }
    }

    /// Values per row of a row-major field, `None` for a per-head one.
    pub fn row_width(self, c: &Config) -> Option<usize> {
        self.width(&Dims::new(c, 0))
    }

    /// `row_width` for a trace of `dims` (any architecture's).
    pub fn width(self, dims: &Dims) -> Option<usize> {
        match self {
            Shape::Rows(Width::Model) => Some(dims.d_model),
            Shape::Rows(Width::Ffn) => Some(dims.d_ff),
            Shape::Heads | Shape::Square => None,
        }
    }
}

/// Declares a block's trace fields: each entry is `Variant field: shape`, with its doc
/// comment. Gives `struct LayerTrace` (one `Vec<f32>` per field, serde names = field names,
/// in table order), `enum Field` (`ALL`, `COUNT`, `name`, `shape`, `of`, `of_mut`) and
/// `LayerTrace::fields`/`fields_mut`.
macro_rules! layer_fields {
    (
        $(#[$struct_doc:meta])*
        pub struct $Trace:ident / pub enum $Field:ident {
            $( $(#[$doc:meta])* $Variant:ident $name:ident : $shape:expr, )*
        }
    ) => {
        $(#[$struct_doc])*
        #[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
        pub struct $Trace {
            $( $(#[$doc])* pub $name: Vec<f32>, )*
        }

        /// A field of a block's trace, in the order of the forward pass.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $Field {
            $( $(#[$doc])* $Variant, )*
        }

        impl $Field {
            /// How many fields a block's trace has.
            pub const COUNT: usize = [$(stringify!($name)),*].len();
            /// Every field, in the order of the forward pass (the struct's, serde's and the
            /// wire's order).
            pub const ALL: [$Field; $Field::COUNT] = [$($Field::$Variant),*];

            /// The field's name in the trace (its serde name).
            pub fn name(self) -> &'static str {
                match self { $($Field::$Variant => stringify!($name)),* }
            }

            /// The field's shape.
            pub fn shape(self) -> $crate::field::Shape {
                #[allow(unused_imports)]
                use $crate::field::{Shape::*, Width::*};
                match self { $($Field::$Variant => $shape),* }
            }

            /// The field in a trace.
            pub fn of(self, l: &$Trace) -> &Vec<f32> {
                match self { $($Field::$Variant => &l.$name),* }
            }

            /// The field in a trace, to write.
            pub fn of_mut(self, l: &mut $Trace) -> &mut Vec<f32> {
                match self { $($Field::$Variant => &mut l.$name),* }
            }
        }

        impl $Trace {
            /// Every field with its name, in the order of the forward pass.
            pub fn fields(&self) -> [(&'static str, &[f32]); $Field::COUNT] {
                [$((stringify!($name), &self.$name[..])),*]
            }

            /// Every field, mutable, in the order of `fields` (to fill a trace that arrives
            /// as one flat buffer, e.g. from the page's CPU worker).
            pub fn fields_mut(&mut self) -> [&mut Vec<f32>; $Field::COUNT] {
                [$(&mut self.$name),*]
            }
        }
    };
}
pub(crate) use layer_fields;

#[cfg(test)]
mod tests {
    use crate::trace::{Field, LayerTrace};

    /// The fields' names in order are a contract: the CLI's `--full` JSON, the app's export,
    /// the e2e tests and tools/onnx read them. Swapping two entries of the table fails here.
    #[test]
    fn the_fields_keep_their_names_and_order() {
        let names: Vec<&str> = Field::ALL.iter().map(|f| f.name()).collect();
        assert_eq!(names, crate::testing::LAYER_FIELD_NAMES);
        let json = serde_json::to_value(LayerTrace::default()).unwrap();
        let keys: Vec<&str> = json
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.as_str())
            .collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(keys, sorted, "serde writes every field under its name");
    }

    /// Each variant reads the struct field of its own name: a table line pairing `Q` with `k`
    /// fails here.
    #[test]
    fn each_variant_reads_the_field_it_is_named_after() {
        let mut l = LayerTrace::default();
        for (i, f) in Field::ALL.into_iter().enumerate() {
            *f.of_mut(&mut l) = vec![i as f32];
        }
        let json = serde_json::to_value(&l).unwrap();
        for (i, f) in Field::ALL.into_iter().enumerate() {
            assert_eq!(json[f.name()], serde_json::json!([i as f32]), "{f:?}");
            assert_eq!(f.of(&l), &vec![i as f32], "{f:?}");
            let variant = format!("{f:?}").to_lowercase();
            assert_eq!(
                variant,
                f.name().replace('_', ""),
                "{f:?} is named {}",
                f.name()
            );
        }
        for (i, (name, xs)) in l.fields().into_iter().enumerate() {
            assert_eq!((name, xs), (Field::ALL[i].name(), &[i as f32][..]));
        }
    }
}
