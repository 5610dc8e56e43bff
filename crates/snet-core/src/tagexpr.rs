//! Tag expressions (spec §3.10, §6): evaluated on the input record of a filter or
//! guarded pattern.

use crate::label::Label;
use crate::record::Record;
use std::fmt;

/// Prefix operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnOp {
    /// Logical negation `!` (bool).
    Not,
    /// Absolute value `abs` (int, wrapping).
    Abs,
}

/// Binary operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    /// `||` (bool, short-circuit)
    Or,
    /// `&&` (bool, short-circuit)
    And,
    /// `==` (int/int or bool/bool)
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `+` (wrapping)
    Add,
    /// `-` (wrapping)
    Sub,
    /// `*` (wrapping)
    Mul,
    /// `/` (truncating; by zero is an error)
    Div,
    /// `%` (C99 remainder; by zero is an error)
    Mod,
    /// `min`
    Min,
    /// `max`
    Max,
}

impl BinOp {
    /// Every operator.
    pub const ALL: [BinOp; 15] = [
        BinOp::Or,
        BinOp::And,
        BinOp::Eq,
        BinOp::Ne,
        BinOp::Lt,
        BinOp::Le,
        BinOp::Gt,
        BinOp::Ge,
        BinOp::Add,
        BinOp::Sub,
        BinOp::Mul,
        BinOp::Div,
        BinOp::Mod,
        BinOp::Min,
        BinOp::Max,
    ];

    /// The operator `op'` with `a op b == b op' a` for ints, if there is one.
    pub fn swapped(self) -> Option<BinOp> {
        Some(match self {
            BinOp::Eq | BinOp::Ne | BinOp::Add | BinOp::Mul | BinOp::Min | BinOp::Max => self,
            BinOp::Lt => BinOp::Gt,
            BinOp::Gt => BinOp::Lt,
            BinOp::Le => BinOp::Ge,
            BinOp::Ge => BinOp::Le,
            BinOp::Or | BinOp::And | BinOp::Sub | BinOp::Div | BinOp::Mod => return None,
        })
    }

    /// Source spelling.
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Or => "||",
            BinOp::And => "&&",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Mod => "%",
            BinOp::Min => "min",
            BinOp::Max => "max",
        }
    }
}

/// A type-checked tag expression.
#[derive(Debug, Clone, PartialEq)]
pub enum TagExpr {
    /// Integer constant.
    Int(i32),
    /// Value of a tag or binding tag (by the label's kind) of the input record.
    Label(Label),
    /// Prefix operation.
    Unary(UnOp, Box<TagExpr>),
    /// Binary operation.
    Binary(BinOp, Box<TagExpr>, Box<TagExpr>),
    /// `c ? a : b`.
    Cond(Box<TagExpr>, Box<TagExpr>, Box<TagExpr>),
}

/// The value of a tag expression.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TagValue {
    /// An `int`.
    Int(i32),
    /// A `bool`.
    Bool(bool),
}

/// A run-time error while evaluating a tag expression (spec §10).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EvalError {
    /// The record lacks a tag the expression reads.
    MissingTag(Label),
    /// Division or remainder by zero.
    DivisionByZero,
    /// An operand of the wrong type (prevented by the type checker).
    TypeMismatch(Mismatch),
}

/// Which operand type was wrong (a small code, so that evaluation results fit in
/// registers: tag expressions are evaluated for every record a filter handles).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mismatch {
    /// `==`/`!=` between an int and a bool.
    EqIntBool,
    /// An int was needed.
    ExpectedInt,
    /// A bool was needed.
    ExpectedBool,
    /// An operator in a position the parser does not produce.
    Operator,
}

impl Mismatch {
    fn describe(self) -> &'static str {
        match self {
            Mismatch::EqIntBool => "== between int and bool",
            Mismatch::ExpectedInt => "expected int, found bool",
            Mismatch::ExpectedBool => "expected bool, found int",
            Mismatch::Operator => "unreachable operator",
        }
    }
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EvalError::MissingTag(l) => {
                write!(f, "tag expression reads {l}, which the record lacks")
            }
            EvalError::DivisionByZero => write!(f, "division by zero in a tag expression"),
            EvalError::TypeMismatch(what) => {
                write!(f, "type mismatch in tag expression: {}", what.describe())
            }
        }
    }
}

impl std::error::Error for EvalError {}

impl TagExpr {
    /// Evaluates on `rec`.
    pub fn eval(&self, rec: &Record) -> Result<TagValue, EvalError> {
        let v = self.operand(rec)?;
        Ok(if self.is_bool() {
            TagValue::Bool(v != 0)
        } else {
            TagValue::Int(v)
        })
    }

    /// Evaluates an `int` expression.
    #[inline]
    pub fn eval_int(&self, rec: &Record) -> Result<i32, EvalError> {
        if self.is_bool() {
            return Err(EvalError::TypeMismatch(Mismatch::ExpectedInt));
        }
        self.operand(rec)
    }

    /// Evaluates a `bool` expression.
    #[inline]
    pub fn eval_bool(&self, rec: &Record) -> Result<bool, EvalError> {
        if !self.is_bool() {
            return Err(EvalError::TypeMismatch(Mismatch::ExpectedBool));
        }
        Ok(self.operand(rec)? != 0)
    }

    /// True for an expression of type `bool` (decided by its shape, as the type
    /// checker does).
    pub fn is_bool(&self) -> bool {
        match self {
            TagExpr::Int(_) | TagExpr::Label(_) | TagExpr::Unary(UnOp::Abs, _) => false,
            TagExpr::Unary(UnOp::Not, _) => true,
            TagExpr::Binary(op, _, _) => matches!(
                op,
                BinOp::Or
                    | BinOp::And
                    | BinOp::Eq
                    | BinOp::Ne
                    | BinOp::Lt
                    | BinOp::Le
                    | BinOp::Gt
                    | BinOp::Ge
            ),
            TagExpr::Cond(_, a, _) => a.is_bool(),
        }
    }

    /// The value with `bool` as 0/1: one `i32` plus a small error fits in the return
    /// registers (tag expressions run for every record a filter handles). Operand types
    /// were checked statically (spec §9 item 9), except for the two operands of `==`,
    /// `!=` and `?:`, which are checked here. The leaves (a tag, a constant) are read
    /// in place: most operands are leaves, and a call per leaf was most of an
    /// evaluation; the other nodes are evaluated by [`TagExpr::raw`].
    #[inline(always)]
    fn operand(&self, rec: &Record) -> Result<i32, EvalError> {
        match self {
            TagExpr::Int(v) => Ok(*v),
            TagExpr::Label(l) => rec.tag(*l).ok_or(EvalError::MissingTag(*l)),
            _ => self.raw(rec),
        }
    }

    /// [`TagExpr::operand`] of an operator or a conditional.
    fn raw(&self, rec: &Record) -> Result<i32, EvalError> {
        Ok(match self {
            TagExpr::Int(_) | TagExpr::Label(_) => self.operand(rec)?,
            TagExpr::Unary(UnOp::Not, e) => i32::from(e.operand(rec)? == 0),
            TagExpr::Unary(UnOp::Abs, e) => e.operand(rec)?.wrapping_abs(),
            TagExpr::Binary(op, a, b) => {
                let x = a.operand(rec)?;
                match op {
                    // Short-circuit: the right operand is not evaluated.
                    BinOp::Or if x != 0 => 1,
                    BinOp::And if x == 0 => 0,
                    BinOp::Or | BinOp::And => i32::from(b.operand(rec)? != 0),
                    _ => {
                        if matches!(op, BinOp::Eq | BinOp::Ne) && a.is_bool() != b.is_bool() {
                            return Err(EvalError::TypeMismatch(Mismatch::EqIntBool));
                        }
                        arith(*op, x, b.operand(rec)?)?
                    }
                }
            }
            TagExpr::Cond(c, a, b) => {
                if c.operand(rec)? != 0 {
                    a.operand(rec)?
                } else {
                    b.operand(rec)?
                }
            }
        })
    }
}

/// Most registers a compiled expression reads ([`Regs`]); a filter reading more tags
/// keeps the interpreted path.
pub(crate) const MAX_REGS: usize = 8;

/// The tags a compiled filter reads, looked up once per record (issue 34: a label
/// read three times by a filter's expressions was searched for three times).
#[derive(Debug)]
pub(crate) struct Regs {
    vals: [i32; MAX_REGS],
    /// Bit `i`: the record carries register `i`'s label.
    present: u32,
}

impl Regs {
    /// Reads `labels` (at most [`MAX_REGS`]) from `rec`.
    #[inline]
    pub(crate) fn load(labels: &[Label], rec: &Record) -> Regs {
        let mut r = Regs {
            vals: [0; MAX_REGS],
            present: 0,
        };
        for (i, l) in labels.iter().enumerate().take(MAX_REGS) {
            if let Some(v) = rec.tag(*l) {
                r.vals[i] = v;
                r.present |= 1 << i;
            }
        }
        r
    }

    /// True if the record carries the labels of every register in `mask`.
    #[inline]
    pub(crate) fn has_all(&self, mask: u32) -> bool {
        self.present & mask == mask
    }
}

/// A tag expression compiled against registers (issue 34): its tags are register
/// numbers, its operand types were checked once, and the commonest shape (a tag and a
/// constant) is one node. Evaluates exactly as [`TagExpr::eval_int`] /
/// [`TagExpr::eval_bool`] on the record the registers were loaded from, errors
/// included (a property test holds it to that).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Code {
    /// A constant.
    Int(i32),
    /// Register `i`, whose label is `labels[i]` (the error names it).
    Reg(u8, Label),
    /// `reg op k` (arithmetic or comparison).
    RegK(BinOp, u8, Label, i32),
    /// `!e`.
    Not(Box<Code>),
    /// `abs e`.
    Abs(Box<Code>),
    /// `a || b`.
    Or(Box<Code>, Box<Code>),
    /// `a && b`.
    And(Box<Code>, Box<Code>),
    /// `a op b` (arithmetic or comparison).
    Bin(BinOp, Box<Code>, Box<Code>),
    /// `a == b` / `a != b` between an int and a bool: `a` is evaluated (its errors
    /// come first), then the mismatch is the error.
    Mismatched(Box<Code>),
    /// `c ? a : b`.
    Cond(Box<Code>, Box<Code>, Box<Code>),
    /// An error raised before anything is read (a guard that is not `bool`, a value
    /// that is not `int`).
    Fail(EvalError),
}

/// Arithmetic and comparison on ints (both evaluators' operators other than `||`, `&&`).
#[inline]
fn arith(op: BinOp, x: i32, y: i32) -> Result<i32, EvalError> {
    Ok(match op {
        BinOp::Eq => i32::from(x == y),
        BinOp::Ne => i32::from(x != y),
        BinOp::Lt => i32::from(x < y),
        BinOp::Le => i32::from(x <= y),
        BinOp::Gt => i32::from(x > y),
        BinOp::Ge => i32::from(x >= y),
        BinOp::Add => x.wrapping_add(y),
        BinOp::Sub => x.wrapping_sub(y),
        BinOp::Mul => x.wrapping_mul(y),
        BinOp::Div | BinOp::Mod if y == 0 => return Err(EvalError::DivisionByZero),
        BinOp::Div => x.wrapping_div(y),
        BinOp::Mod => x.wrapping_rem(y),
        BinOp::Min => x.min(y),
        BinOp::Max => x.max(y),
        BinOp::Or | BinOp::And => return Err(EvalError::TypeMismatch(Mismatch::Operator)),
    })
}

impl TagExpr {
    /// Compiles an `int` expression (as [`TagExpr::eval_int`] evaluates it), adding the
    /// tags it reads to `regs`; `None` if they would exceed [`MAX_REGS`].
    pub(crate) fn compile_int(&self, regs: &mut Vec<Label>) -> Option<Code> {
        if self.is_bool() {
            return Some(Code::Fail(EvalError::TypeMismatch(Mismatch::ExpectedInt)));
        }
        self.compile(regs)
    }

    /// Compiles a `bool` expression (as [`TagExpr::eval_bool`] evaluates it; the value
    /// is 0 or 1).
    pub(crate) fn compile_bool(&self, regs: &mut Vec<Label>) -> Option<Code> {
        if !self.is_bool() {
            return Some(Code::Fail(EvalError::TypeMismatch(Mismatch::ExpectedBool)));
        }
        self.compile(regs)
    }

    /// Register of tag `l` in `regs`, added if new.
    fn reg(l: Label, regs: &mut Vec<Label>) -> Option<u8> {
        if let Some(i) = regs.iter().position(|r| *r == l) {
            return Some(i as u8);
        }
        if regs.len() == MAX_REGS {
            return None;
        }
        regs.push(l);
        Some((regs.len() - 1) as u8)
    }

    /// [`TagExpr::operand`] compiled.
    fn compile(&self, regs: &mut Vec<Label>) -> Option<Code> {
        let sub = |e: &TagExpr, regs: &mut Vec<Label>| e.compile(regs).map(Box::new);
        Some(match self {
            TagExpr::Int(v) => Code::Int(*v),
            TagExpr::Label(l) => Code::Reg(TagExpr::reg(*l, regs)?, *l),
            TagExpr::Unary(UnOp::Not, e) => Code::Not(sub(e, regs)?),
            TagExpr::Unary(UnOp::Abs, e) => Code::Abs(sub(e, regs)?),
            TagExpr::Binary(BinOp::Or, a, b) => Code::Or(sub(a, regs)?, sub(b, regs)?),
            TagExpr::Binary(BinOp::And, a, b) => Code::And(sub(a, regs)?, sub(b, regs)?),
            TagExpr::Binary(op, a, b) => {
                if matches!(op, BinOp::Eq | BinOp::Ne) && a.is_bool() != b.is_bool() {
                    return Some(Code::Mismatched(sub(a, regs)?));
                }
                match (&**a, &**b) {
                    (TagExpr::Label(l), TagExpr::Int(k)) => {
                        Code::RegK(*op, TagExpr::reg(*l, regs)?, *l, *k)
                    }
                    // `k op reg` as `reg op' k` where the operands may swap (`2 * id`).
                    (TagExpr::Int(k), TagExpr::Label(l)) if op.swapped().is_some() => {
                        let swapped = op.swapped().unwrap_or(*op);
                        Code::RegK(swapped, TagExpr::reg(*l, regs)?, *l, *k)
                    }
                    _ => Code::Bin(*op, sub(a, regs)?, sub(b, regs)?),
                }
            }
            TagExpr::Cond(c, a, b) => Code::Cond(sub(c, regs)?, sub(a, regs)?, sub(b, regs)?),
        })
    }
}

impl Code {
    /// The value (a `bool` as 0/1) on the record `regs` were loaded from.
    #[inline(always)]
    pub(crate) fn eval(&self, regs: &Regs) -> Result<i32, EvalError> {
        match self {
            Code::Int(v) => Ok(*v),
            Code::Reg(i, l) => Code::read(regs, *i, *l),
            Code::RegK(op, i, l, k) => arith(*op, Code::read(regs, *i, *l)?, *k),
            _ => self.eval_tree(regs),
        }
    }

    #[inline(always)]
    fn read(regs: &Regs, i: u8, l: Label) -> Result<i32, EvalError> {
        if regs.present & (1 << i) != 0 {
            Ok(regs.vals[i as usize])
        } else {
            Err(EvalError::MissingTag(l))
        }
    }

    /// [`Code::eval`] of the other nodes.
    #[inline(never)]
    fn eval_tree(&self, regs: &Regs) -> Result<i32, EvalError> {
        Ok(match self {
            Code::Int(_) | Code::Reg(..) | Code::RegK(..) => self.eval(regs)?,
            Code::Not(e) => i32::from(e.eval(regs)? == 0),
            Code::Abs(e) => e.eval(regs)?.wrapping_abs(),
            Code::Or(a, b) => {
                if a.eval(regs)? != 0 {
                    1
                } else {
                    i32::from(b.eval(regs)? != 0)
                }
            }
            Code::And(a, b) => {
                if a.eval(regs)? == 0 {
                    0
                } else {
                    i32::from(b.eval(regs)? != 0)
                }
            }
            Code::Bin(op, a, b) => {
                let x = a.eval(regs)?;
                arith(*op, x, b.eval(regs)?)?
            }
            Code::Mismatched(a) => {
                a.eval(regs)?;
                return Err(EvalError::TypeMismatch(Mismatch::EqIntBool));
            }
            Code::Cond(c, a, b) => {
                if c.eval(regs)? != 0 {
                    a.eval(regs)?
                } else {
                    b.eval(regs)?
                }
            }
            Code::Fail(e) => return Err(e.clone()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bin(op: BinOp, a: TagExpr, b: TagExpr) -> TagExpr {
        TagExpr::Binary(op, Box::new(a), Box::new(b))
    }

    #[test]
    fn c_semantics_for_division_and_wrapping() {
        let r = Record::new().with_tag("x", -7);
        let x = || TagExpr::Label(Label::tag("x"));
        assert_eq!(bin(BinOp::Div, x(), TagExpr::Int(2)).eval_int(&r), Ok(-3));
        assert_eq!(bin(BinOp::Mod, x(), TagExpr::Int(2)).eval_int(&r), Ok(-1));
        assert_eq!(
            bin(BinOp::Div, x(), TagExpr::Int(0)).eval_int(&r),
            Err(EvalError::DivisionByZero)
        );
        assert_eq!(
            bin(BinOp::Add, TagExpr::Int(i32::MAX), TagExpr::Int(1)).eval_int(&r),
            Ok(i32::MIN)
        );
        assert_eq!(
            TagExpr::Label(Label::tag("y")).eval(&r),
            Err(EvalError::MissingTag(Label::tag("y")))
        );
    }

    #[test]
    fn bools_short_circuit_and_types_follow_the_shape() {
        let r = Record::new().with_tag("x", 3);
        let x = || TagExpr::Label(Label::tag("x"));
        let missing = || TagExpr::Label(Label::tag("nope"));
        let lt = bin(BinOp::Lt, x(), TagExpr::Int(5));
        // `true || <missing>` and `false && <missing>` never read the missing tag.
        let or = bin(
            BinOp::Or,
            lt.clone(),
            bin(BinOp::Eq, missing(), TagExpr::Int(1)),
        );
        assert_eq!(or.eval(&r), Ok(TagValue::Bool(true)));
        let and = bin(
            BinOp::And,
            bin(BinOp::Gt, x(), TagExpr::Int(5)),
            bin(BinOp::Eq, missing(), TagExpr::Int(1)),
        );
        assert_eq!(and.eval(&r), Ok(TagValue::Bool(false)));
        let cond = TagExpr::Cond(Box::new(lt.clone()), Box::new(x()), Box::new(missing()));
        assert_eq!(cond.eval(&r), Ok(TagValue::Int(3)));
        let not = TagExpr::Unary(UnOp::Not, Box::new(lt.clone()));
        assert_eq!(not.eval_bool(&r), Ok(false));
        assert_eq!(
            TagExpr::Unary(UnOp::Abs, Box::new(TagExpr::Int(-4))).eval(&r),
            Ok(TagValue::Int(4))
        );
        assert_eq!(bin(BinOp::Max, x(), TagExpr::Int(9)).eval_int(&r), Ok(9));
        assert!(lt.eval_int(&r).is_err(), "a comparison is not an int");
        assert!(x().eval_bool(&r).is_err(), "a tag is not a bool");
        assert_eq!(
            bin(BinOp::Eq, lt, x()).eval(&r),
            Err(EvalError::TypeMismatch(Mismatch::EqIntBool))
        );
    }

    /// Compiled expressions (issue 34) evaluate as the tree does, errors included: on
    /// random expressions of every operator (ill-typed ones too, as a hand-built net
    /// could hold) over tags the record may lack.
    #[test]
    fn compiled_expressions_agree_with_the_tree() {
        use proptest::prelude::*;
        let ops = BinOp::ALL;
        let leaf = prop_oneof![
            (-3i32..4).prop_map(TagExpr::Int),
            prop_oneof![Just("x"), Just("y"), Just("z")]
                .prop_map(|n| TagExpr::Label(Label::tag(n))),
            Just(TagExpr::Label(Label::btag("b"))),
        ];
        let expr = leaf.prop_recursive(4, 24, 3, move |inner| {
            prop_oneof![
                (0usize..15, inner.clone(), inner.clone())
                    .prop_map(move |(o, a, b)| bin(ops[o], a, b)),
                inner
                    .clone()
                    .prop_map(|e| TagExpr::Unary(UnOp::Not, Box::new(e))),
                inner
                    .clone()
                    .prop_map(|e| TagExpr::Unary(UnOp::Abs, Box::new(e))),
                (inner.clone(), inner.clone(), inner).prop_map(|(c, a, b)| TagExpr::Cond(
                    Box::new(c),
                    Box::new(a),
                    Box::new(b)
                )),
            ]
        });
        let tag = || proptest::option::of(-3i32..4);
        proptest::proptest!(
            proptest::test_runner::Config::with_cases(2000),
            |(e in expr, x in tag(), y in tag(), b in tag())| {
                let mut r = Record::new();
                if let Some(v) = x { r.set_tag(Label::tag("x"), v); }
                if let Some(v) = y { r.set_tag(Label::tag("y"), v); }
                if let Some(v) = b { r.set_tag(Label::btag("b"), v); }
                let mut regs = Vec::new();
                let int = e.compile_int(&mut regs).expect("few tags");
                let boolean = e.compile_bool(&mut regs).expect("few tags");
                let loaded = Regs::load(&regs, &r);
                prop_assert_eq!(int.eval(&loaded), e.eval_int(&r));
                prop_assert_eq!(
                    boolean.eval(&loaded).map(|v| v != 0),
                    e.eval_bool(&r)
                );
            }
        );
    }

    /// An expression reading more tags than registers hold is not compiled.
    #[test]
    fn too_many_tags_are_not_compiled() {
        let sum = (0..=MAX_REGS)
            .map(|i| TagExpr::Label(Label::tag(&format!("t{i}"))))
            .reduce(|a, b| bin(BinOp::Add, a, b))
            .unwrap();
        assert!(sum.compile_int(&mut Vec::new()).is_none());
    }
}
