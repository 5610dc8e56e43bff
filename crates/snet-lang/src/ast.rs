//! The syntax tree, with byte spans (spec §3).
//!
//! Chains are n-ary where the language makes them so: a choice `a | b | c` is one
//! [`ExprKind::Choice`] with three branches, a serial chain `a .. b .. c` one
//! [`ExprKind::Serial`] (right-nested in meaning, §3.6), and the postfix operators of one
//! operand one [`ExprKind::Postfix`]. Parentheses that change the tree show as nesting;
//! others leave no trace. This keeps the tree shallow for long chains.

use crate::span::Span;
pub use snet_core::tagexpr::{BinOp, UnOp};
pub use snet_core::LabelKind;

/// A name with its position.
#[derive(Debug, Clone, PartialEq)]
pub struct Ident {
    /// The name.
    pub name: String,
    /// Where.
    pub span: Span,
}

/// A label `x`, `<t>` or `<#b>` as written.
#[derive(Debug, Clone, PartialEq)]
pub struct LabelRef {
    /// Field, tag or binding tag.
    pub kind: LabelKind,
    /// The name without brackets.
    pub name: String,
    /// Where (the whole `<...>`).
    pub span: Span,
}

/// A whole source file.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Program {
    /// Top-level definitions in order.
    pub defs: Vec<Def>,
    /// Names of box and net definitions the parser rejected (with an error of their
    /// own): a use of one is not reported as undefined as well.
    pub rejected: Vec<String>,
}

/// A definition (§3.2).
#[derive(Debug, Clone, PartialEq)]
pub enum Def {
    /// `box f (...);`
    Box(BoxDef),
    /// `net n ... connect ...;`
    Net(NetDef),
    /// `type T = ...;`
    Type(TypeDef),
    /// `typesig S = ...;`
    Typesig(TypesigDef),
    /// `<metadata> ... </metadata>`
    Metadata(Metadata),
}

/// A box definition (§3.3).
#[derive(Debug, Clone, PartialEq)]
pub struct BoxDef {
    /// The box name.
    pub name: Ident,
    /// Input labels; `None` for an initialiser (`( -> ...)`).
    pub input: Option<Vec<BoxInLabel>>,
    /// Output variants, labels in written order.
    pub outputs: Vec<Vec<LabelRef>>,
    /// The whole definition.
    pub span: Span,
}

/// An input label of a box, possibly with pass-through qualifiers `=`.
#[derive(Debug, Clone, PartialEq)]
pub struct BoxInLabel {
    /// The label.
    pub label: LabelRef,
    /// Number of `=` qualifiers written after it (0 normally).
    pub qualifiers: u8,
    /// Span of the qualifiers (empty if none).
    pub qualifier_span: Span,
}

/// A net definition (§3.4).
#[derive(Debug, Clone, PartialEq)]
pub struct NetDef {
    /// The net name.
    pub name: Ident,
    /// Declared signature.
    pub sig: Option<Vec<SigItem>>,
    /// Local definitions; `None` when there are no braces.
    pub body: Option<Vec<Def>>,
    /// The `connect` expression.
    pub expr: Expr,
    /// The whole definition.
    pub span: Span,
}

/// One item of a signature.
#[derive(Debug, Clone, PartialEq)]
pub enum SigItem {
    /// `in -> out`.
    Map(TypeMap),
    /// Name of a typesig.
    Named(Ident),
}

/// A type mapping `in -> out` (§3.4).
#[derive(Debug, Clone, PartialEq)]
pub struct TypeMap {
    /// Input alternatives (empty: no input type).
    pub input: Vec<InAlt>,
    /// Output.
    pub output: OutSpec,
    /// Where.
    pub span: Span,
}

/// An input alternative.
#[derive(Debug, Clone, PartialEq)]
pub enum InAlt {
    /// `{...}`
    Rec(RecType),
    /// A type name.
    Named(Ident),
}

/// The output of a mapping.
#[derive(Debug, Clone, PartialEq)]
pub enum OutSpec {
    /// Alternatives (empty: emits nothing).
    Alts(Vec<OutAlt>),
    /// `...` (unspecified).
    Unspecified(Span),
}

/// An output alternative.
#[derive(Debug, Clone, PartialEq)]
pub enum OutAlt {
    /// `{=a, <t>}`; the bool is the pass-through marker `=`.
    Rec(Vec<(bool, LabelRef)>, Span),
    /// A type name.
    Named(Ident),
}

/// A record type `{a, <t>, <#b>}`.
#[derive(Debug, Clone, PartialEq)]
pub struct RecType {
    /// Labels in written order.
    pub labels: Vec<LabelRef>,
    /// Where (braces included).
    pub span: Span,
}

/// `type T = ...;`
#[derive(Debug, Clone, PartialEq)]
pub struct TypeDef {
    /// The name.
    pub name: Ident,
    /// The alternatives.
    pub alts: Vec<InAlt>,
    /// Where.
    pub span: Span,
}

/// `typesig S = ...;`
#[derive(Debug, Clone, PartialEq)]
pub struct TypesigDef {
    /// The name.
    pub name: Ident,
    /// The signature.
    pub sig: Vec<SigItem>,
    /// Where.
    pub span: Span,
}

/// A metadata block (§3.11): its elements.
#[derive(Debug, Clone, PartialEq)]
pub struct Metadata {
    /// Top-level elements inside `<metadata>`.
    pub elems: Vec<MdElem>,
    /// Where.
    pub span: Span,
}

/// An XML-like metadata element.
#[derive(Debug, Clone, PartialEq)]
pub struct MdElem {
    /// Element name.
    pub name: String,
    /// Attributes in order.
    pub attrs: Vec<(String, String)>,
    /// Child elements.
    pub children: Vec<MdElem>,
    /// Character data (trimmed), if any.
    pub text: String,
    /// Where (the start tag).
    pub span: Span,
}

impl MdElem {
    /// The value of attribute `name`.
    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A network expression.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    /// What it is.
    pub kind: ExprKind,
    /// Where.
    pub span: Span,
}

/// Network expression kinds (§3.6).
#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    /// A box or net name.
    Ref(Ident),
    /// `[]`
    Identity,
    /// `[p -> ...]`
    Filter(Filter),
    /// `[| p, q, ... |]`
    Sync(Vec<GuardedPat>),
    /// `a .. b .. c` (at least two elements; means `a .. (b .. c)`).
    Serial(Vec<Expr>),
    /// `a | b | c` or `a || b || c` (at least two branches).
    Choice {
        /// `||`
        det: bool,
        /// Branches, left to right.
        branches: Vec<Expr>,
    },
    /// An operand with postfix operators applied left to right.
    Postfix(Box<Expr>, Vec<PostOp>),
    /// Placeholder after a syntax error.
    Error,
}

/// A postfix operator (§3.6 `PostfixOp`).
#[derive(Debug, Clone, PartialEq)]
pub enum PostOp {
    /// `* P` / `** P`
    Star {
        /// `**`
        det: bool,
        /// Exit patterns.
        exits: Vec<GuardedPat>,
        /// Where (operator and patterns).
        span: Span,
    },
    /// `! <t>`, `!! <t>`, `!@ <t>`, `!!@ <t>`
    Split {
        /// `!!`
        det: bool,
        /// `@` placement
        placed: bool,
        /// Index tag or binding tag.
        index: LabelRef,
        /// Where.
        span: Span,
    },
    /// `\ P`
    Feedback {
        /// Back patterns.
        back: Vec<GuardedPat>,
        /// Where.
        span: Span,
    },
    /// `@ n`
    At {
        /// Location.
        location: i64,
        /// Where.
        span: Span,
    },
}

impl PostOp {
    /// Where the operator is.
    pub fn span(&self) -> Span {
        match self {
            PostOp::Star { span, .. }
            | PostOp::Split { span, .. }
            | PostOp::Feedback { span, .. }
            | PostOp::At { span, .. } => *span,
        }
    }
}

/// A pattern with an optional guard.
#[derive(Debug, Clone, PartialEq)]
pub struct GuardedPat {
    /// The pattern.
    pub pat: RecType,
    /// The guard.
    pub guard: Option<TagExpr>,
}

/// A filter `[p -> if <g> then A else ... B]` (§3.7).
#[derive(Debug, Clone, PartialEq)]
pub struct Filter {
    /// The pattern.
    pub pattern: RecType,
    /// Guarded actions.
    pub guards: Vec<(TagExpr, Vec<RecOut>)>,
    /// Final action.
    pub default: Vec<RecOut>,
}

/// One output record of a filter action.
#[derive(Debug, Clone, PartialEq)]
pub struct RecOut {
    /// Items in written order.
    pub items: Vec<OutItem>,
    /// Where.
    pub span: Span,
}

/// A filter output item.
#[derive(Debug, Clone, PartialEq)]
pub enum OutItem {
    /// `f` (from = None) or `f = g`.
    Field {
        /// Output name.
        to: Ident,
        /// Source field.
        from: Option<Ident>,
    },
    /// `<t>`, `<t = e>`, `<#b>`, `<#b = e>`.
    Tag {
        /// Tag or binding tag.
        kind: LabelKind,
        /// Name.
        to: Ident,
        /// Value.
        value: Option<TagExpr>,
        /// Where (whole item).
        span: Span,
    },
}

/// A tag expression (§3.10).
#[derive(Debug, Clone, PartialEq)]
pub struct TagExpr {
    /// What.
    pub kind: TagExprKind,
    /// Where.
    pub span: Span,
}

/// Tag expression kinds.
#[derive(Debug, Clone, PartialEq)]
pub enum TagExprKind {
    /// A literal (negative for `- Int`).
    Int(i64),
    /// Tag `t`.
    Tag(String),
    /// Binding tag `#b`.
    BTag(String),
    /// `!e`, `abs e`.
    Unary(UnOp, Box<TagExpr>),
    /// `a op b`.
    Binary(BinOp, Box<TagExpr>, Box<TagExpr>),
    /// `c ? a : b`.
    Cond(Box<TagExpr>, Box<TagExpr>, Box<TagExpr>),
    /// Placeholder after a syntax error.
    Error,
}
