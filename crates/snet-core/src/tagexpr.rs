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
    #[inline]
    pub fn eval(&self, rec: &Record) -> Result<TagValue, EvalError> {
        Ok(match self {
            TagExpr::Int(v) => TagValue::Int(*v),
            TagExpr::Label(l) => TagValue::Int(rec.tag(*l).ok_or(EvalError::MissingTag(*l))?),
            TagExpr::Unary(UnOp::Not, e) => TagValue::Bool(!e.eval_bool(rec)?),
            TagExpr::Unary(UnOp::Abs, e) => TagValue::Int(e.eval_int(rec)?.wrapping_abs()),
            TagExpr::Binary(op, a, b) => match op {
                BinOp::Or => TagValue::Bool(a.eval_bool(rec)? || b.eval_bool(rec)?),
                BinOp::And => TagValue::Bool(a.eval_bool(rec)? && b.eval_bool(rec)?),
                BinOp::Eq | BinOp::Ne => {
                    let eq = match (a.eval(rec)?, b.eval(rec)?) {
                        (TagValue::Int(x), TagValue::Int(y)) => x == y,
                        (TagValue::Bool(x), TagValue::Bool(y)) => x == y,
                        _ => return Err(EvalError::TypeMismatch(Mismatch::EqIntBool)),
                    };
                    TagValue::Bool(if *op == BinOp::Eq { eq } else { !eq })
                }
                _ => {
                    let x = a.eval_int(rec)?;
                    let y = b.eval_int(rec)?;
                    match op {
                        BinOp::Lt => TagValue::Bool(x < y),
                        BinOp::Le => TagValue::Bool(x <= y),
                        BinOp::Gt => TagValue::Bool(x > y),
                        BinOp::Ge => TagValue::Bool(x >= y),
                        BinOp::Add => TagValue::Int(x.wrapping_add(y)),
                        BinOp::Sub => TagValue::Int(x.wrapping_sub(y)),
                        BinOp::Mul => TagValue::Int(x.wrapping_mul(y)),
                        BinOp::Div => {
                            if y == 0 {
                                return Err(EvalError::DivisionByZero);
                            }
                            TagValue::Int(x.wrapping_div(y))
                        }
                        BinOp::Mod => {
                            if y == 0 {
                                return Err(EvalError::DivisionByZero);
                            }
                            TagValue::Int(x.wrapping_rem(y))
                        }
                        BinOp::Min => TagValue::Int(x.min(y)),
                        BinOp::Max => TagValue::Int(x.max(y)),
                        BinOp::Or | BinOp::And | BinOp::Eq | BinOp::Ne => {
                            return Err(EvalError::TypeMismatch(Mismatch::Operator))
                        }
                    }
                }
            },
            TagExpr::Cond(c, a, b) => {
                if c.eval_bool(rec)? {
                    a.eval(rec)?
                } else {
                    b.eval(rec)?
                }
            }
        })
    }

    /// Evaluates an `int` expression.
    pub fn eval_int(&self, rec: &Record) -> Result<i32, EvalError> {
        match self.eval(rec)? {
            TagValue::Int(v) => Ok(v),
            TagValue::Bool(_) => Err(EvalError::TypeMismatch(Mismatch::ExpectedInt)),
        }
    }

    /// Evaluates a `bool` expression.
    pub fn eval_bool(&self, rec: &Record) -> Result<bool, EvalError> {
        match self.eval(rec)? {
            TagValue::Bool(v) => Ok(v),
            TagValue::Int(_) => Err(EvalError::TypeMismatch(Mismatch::ExpectedBool)),
        }
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
}
