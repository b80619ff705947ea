//! Errors a renderer can raise; the binding maps each kind to its Python exception.

/// The Python exception type Letta raises in the same situation, and its message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RenderError {
    Type(String),
    Attribute(String),
    Value(String),
    Overflow(String),
    NotImplemented(String),
}

pub type RenderResult<T = ()> = Result<T, RenderError>;
