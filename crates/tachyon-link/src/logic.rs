//! Liberty Boolean functions (`function`, `when`): parsed into expressions over a cell's
//! pins and evaluated with known constants, for case analysis.
//!
//! Syntax: pin names, `0`/`1`, `!a` or `a'` (not), `a & b`, `a * b` or `a b` (and),
//! `a | b` or `a + b` (or), `a ^ b` (xor), parentheses. Precedence: not, and, xor, or.

/// A Boolean expression over a cell's pins.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Expr {
    Constant(bool),
    Pin(String),
    Not(Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Xor(Box<Expr>, Box<Expr>),
}

/// The deepest nesting an expression may have (functions are short).
const MAX_DEPTH: usize = 64;

/// Parses a Liberty function; None when it does not parse.
pub(crate) fn parse(text: &str) -> Option<Expr> {
    let tokens = tokenize(text)?;
    let mut parser = Parser {
        tokens: &tokens,
        position: 0,
    };
    let expression = parser.or(0)?;
    (parser.position == tokens.len()).then_some(expression)
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Name(String),
    Not,
    Prime,
    And,
    Or,
    Xor,
    Open,
    Close,
}

fn tokenize(text: &str) -> Option<Vec<Token>> {
    let mut tokens = Vec::new();
    let mut characters = text.chars().peekable();
    while let Some(&character) = characters.peek() {
        match character {
            ' ' | '\t' | '\n' | '\r' | '"' => {
                characters.next();
            }
            '!' => {
                characters.next();
                tokens.push(Token::Not);
            }
            '\'' => {
                characters.next();
                tokens.push(Token::Prime);
            }
            '&' | '*' => {
                characters.next();
                tokens.push(Token::And);
            }
            '|' | '+' => {
                characters.next();
                tokens.push(Token::Or);
            }
            '^' => {
                characters.next();
                tokens.push(Token::Xor);
            }
            '(' => {
                characters.next();
                tokens.push(Token::Open);
            }
            ')' => {
                characters.next();
                tokens.push(Token::Close);
            }
            _ if character.is_alphanumeric() || "_[].$\\".contains(character) => {
                let mut name = String::new();
                while let Some(&next) = characters.peek() {
                    if next.is_alphanumeric() || "_[].$\\".contains(next) {
                        name.push(next);
                        characters.next();
                    } else {
                        break;
                    }
                }
                tokens.push(Token::Name(name));
            }
            _ => return None,
        }
    }
    Some(tokens)
}

struct Parser<'t> {
    tokens: &'t [Token],
    position: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.position)
    }

    fn or(&mut self, depth: usize) -> Option<Expr> {
        let mut left = self.xor(depth)?;
        while self.peek() == Some(&Token::Or) {
            self.position += 1;
            let right = self.xor(depth)?;
            left = Expr::Or(Box::new(left), Box::new(right));
        }
        Some(left)
    }

    fn xor(&mut self, depth: usize) -> Option<Expr> {
        let mut left = self.and(depth)?;
        while self.peek() == Some(&Token::Xor) {
            self.position += 1;
            let right = self.and(depth)?;
            left = Expr::Xor(Box::new(left), Box::new(right));
        }
        Some(left)
    }

    fn and(&mut self, depth: usize) -> Option<Expr> {
        let mut left = self.unary(depth)?;
        loop {
            match self.peek() {
                Some(Token::And) => {
                    self.position += 1;
                }
                // Juxtaposition is an and.
                Some(Token::Name(_) | Token::Not | Token::Open) => {}
                _ => break,
            }
            let right = self.unary(depth)?;
            left = Expr::And(Box::new(left), Box::new(right));
        }
        Some(left)
    }

    fn unary(&mut self, depth: usize) -> Option<Expr> {
        if depth > MAX_DEPTH {
            return None;
        }
        let mut expression = match self.peek()?.clone() {
            Token::Not => {
                self.position += 1;
                Expr::Not(Box::new(self.unary(depth + 1)?))
            }
            Token::Open => {
                self.position += 1;
                let inner = self.or(depth + 1)?;
                if self.peek() != Some(&Token::Close) {
                    return None;
                }
                self.position += 1;
                inner
            }
            Token::Name(name) => {
                self.position += 1;
                match name.as_str() {
                    "0" => Expr::Constant(false),
                    "1" => Expr::Constant(true),
                    _ => Expr::Pin(name),
                }
            }
            _ => return None,
        };
        while self.peek() == Some(&Token::Prime) {
            self.position += 1;
            expression = Expr::Not(Box::new(expression));
        }
        Some(expression)
    }
}

impl Expr {
    /// The pins the expression reads, each once.
    pub(crate) fn pins(&self, into: &mut Vec<String>) {
        match self {
            Expr::Constant(_) => {}
            Expr::Pin(name) => {
                if !into.contains(name) {
                    into.push(name.clone());
                }
            }
            Expr::Not(inner) => inner.pins(into),
            Expr::And(a, b) | Expr::Or(a, b) | Expr::Xor(a, b) => {
                a.pins(into);
                b.pins(into);
            }
        }
    }

    /// The value with pins valued by `value` (None: a pin's value is unknown, so
    /// is the result's, unless the known ones decide it).
    pub(crate) fn evaluate(&self, value: &dyn Fn(&str) -> Option<bool>) -> Option<bool> {
        match self {
            Expr::Constant(constant) => Some(*constant),
            Expr::Pin(name) => value(name),
            Expr::Not(inner) => inner.evaluate(value).map(|inner| !inner),
            Expr::And(a, b) => match (a.evaluate(value), b.evaluate(value)) {
                (Some(false), _) | (_, Some(false)) => Some(false),
                (Some(true), Some(true)) => Some(true),
                _ => None,
            },
            Expr::Or(a, b) => match (a.evaluate(value), b.evaluate(value)) {
                (Some(true), _) | (_, Some(true)) => Some(true),
                (Some(false), Some(false)) => Some(false),
                _ => None,
            },
            Expr::Xor(a, b) => match (a.evaluate(value), b.evaluate(value)) {
                (Some(a), Some(b)) => Some(a != b),
                _ => None,
            },
        }
    }

    /// The constant the expression takes for every value of its unknown pins, if any
    /// (the free pins are enumerated, up to 12 of them).
    pub(crate) fn constant_value(&self, known: &dyn Fn(&str) -> Option<bool>) -> Option<bool> {
        let mut pins = Vec::new();
        self.pins(&mut pins);
        let free: Vec<String> = pins
            .into_iter()
            .filter(|pin| known(pin).is_none())
            .collect();
        if free.len() > 12 {
            return self.evaluate(known);
        }
        let mut result = None;
        for assignment in 0u32..(1 << free.len()) {
            let value = |pin: &str| {
                known(pin).or_else(|| {
                    free.iter()
                        .position(|free_pin| free_pin == pin)
                        .map(|at| assignment & (1 << at) != 0)
                })
            };
            let outcome = self.evaluate(&value)?;
            match result {
                None => result = Some(outcome),
                Some(previous) if previous != outcome => return None,
                Some(_) => {}
            }
        }
        result
    }

    /// Whether the expression depends on `pin` for some value of the other unknown pins.
    pub(crate) fn depends_on(&self, pin: &str, known: &dyn Fn(&str) -> Option<bool>) -> bool {
        let with = |constant: bool| {
            move |name: &str| {
                if name == pin {
                    Some(constant)
                } else {
                    known(name)
                }
            }
        };
        let mut pins = Vec::new();
        self.pins(&mut pins);
        if !pins.iter().any(|name| name == pin) {
            return false;
        }
        let free: Vec<String> = pins
            .into_iter()
            .filter(|name| name != pin && known(name).is_none())
            .collect();
        if free.len() > 12 {
            return true;
        }
        for assignment in 0u32..(1 << free.len()) {
            let assign = |name: &str| {
                free.iter()
                    .position(|free_pin| free_pin == name)
                    .map(|at| assignment & (1 << at) != 0)
            };
            let low = with(false);
            let high = with(true);
            let low = self.evaluate(&|name| low(name).or_else(|| assign(name)));
            let high = self.evaluate(&|name| high(name).or_else(|| assign(name)));
            if low != high {
                return true;
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn none(_: &str) -> Option<bool> {
        None
    }

    #[test]
    fn liberty_syntax_parses_with_precedence() {
        let expression = parse("!(A1 & A2) | B'").unwrap();
        let value = |a1: bool, a2: bool, b: bool| {
            expression.evaluate(&|pin| match pin {
                "A1" => Some(a1),
                "A2" => Some(a2),
                "B" => Some(b),
                _ => None,
            })
        };
        assert_eq!(value(true, true, true), Some(false));
        assert_eq!(value(true, true, false), Some(true));
        assert_eq!(value(false, true, true), Some(true));
        let juxtaposed = parse("A B + C").unwrap();
        assert_eq!(
            juxtaposed,
            Expr::Or(
                Box::new(Expr::And(
                    Box::new(Expr::Pin("A".into())),
                    Box::new(Expr::Pin("B".into()))
                )),
                Box::new(Expr::Pin("C".into()))
            )
        );
        assert!(parse("A &").is_none());
        assert!(parse(&"(".repeat(1000)).is_none());
    }

    #[test]
    fn constants_and_sensitivity() {
        let mux = parse("(S & B) | (!S & A)").unwrap();
        let select_low = |pin: &str| (pin == "S").then_some(false);
        assert!(mux.depends_on("A", &select_low));
        assert!(!mux.depends_on("B", &select_low));
        assert_eq!(mux.constant_value(&select_low), None);
        let and = parse("A1 & A2").unwrap();
        let low = |pin: &str| (pin == "A2").then_some(false);
        assert_eq!(and.constant_value(&low), Some(false));
        assert!(!and.depends_on("A1", &low));
        assert!(and.depends_on("A1", &none));
        let xor_self = parse("A ^ A").unwrap();
        assert_eq!(xor_self.constant_value(&none), Some(false));
    }
}
