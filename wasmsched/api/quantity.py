"""Kubernetes resource.Quantity: parsing, integer values and canonical strings.

A port of k8s.io/apimachinery/pkg/api/resource (ParseQuantity, Value, MilliValue, String).
Values are kept exact as fractions.Fraction; parsing rounds non-zero values away from zero to
nano precision and caps BinarySI magnitudes at 2^63-1, as Kubernetes does. kube_scaled_value is
Value()/MilliValue() in kube's own int64 arithmetic, wrap-arounds included, for the values
kube-scheduler takes that way (a node's allocatable).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from fractions import Fraction

from wasmsched.util.intbounds import INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN

DECIMAL_EXPONENT = "DecimalExponent"
BINARY_SI = "BinarySI"
DECIMAL_SI = "DecimalSI"

SPLIT_RE_STRING = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
ERR_FORMAT_WRONG = "quantities must match the regular expression '" + SPLIT_RE_STRING + "'"
ERR_NUMERIC = "unable to parse numeric part of quantity"
ERR_SUFFIX = "unable to parse quantity's suffix"

_DIGITS = frozenset("0123456789")
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
_NANO = 10**9
# Exponents beyond this are accepted by Kubernetes but cannot be materialised as exact integers;
# nothing a scheduler compares is that large, so they are rejected as numerically unparsable.
_MAX_MATERIALISED_EXPONENT = 4096
# Likewise for the digits of the number itself: Python refuses int() on more than 4300 digits (and
# such a value means nothing to a scheduler), so longer numerals are rejected the same way.
_MAX_MATERIALISED_DIGITS = 4096

_DEC_SUFFIXES: dict[str, int] = {
    "n": -9,
    "u": -6,
    "m": -3,
    "": 0,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
    "E": 18,
}
_BIN_SUFFIXES: dict[str, int] = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DEC_BY_EXP = {e: s for s, e in _DEC_SUFFIXES.items()}
_BIN_BY_EXP = {e: s for s, e in _BIN_SUFFIXES.items()}


@dataclass(frozen=True, slots=True)
class Quantity:
    """A parsed quantity: exact value, the Kubernetes Format, and the original string when reusable."""

    amount: Fraction
    format: str = DECIMAL_SI
    original: str | None = None

    def value(self) -> int:
        """The value rounded up (away from zero) to an integer, like Quantity.Value()."""
        return _round_away(self.amount)

    def milli_value(self) -> int:
        """The value in thousandths rounded up (away from zero), like Quantity.MilliValue()."""
        return _round_away(self.amount * 1000)

    def canonical(self) -> str:
        """The canonical string Kubernetes CanonicalizeBytes produces for this value and format."""
        return _canonicalize(self.amount, self.format)

    def __str__(self) -> str:
        """Like Quantity.String(): the parsed string when Kubernetes keeps it, else the canonical one."""
        return self.original if self.original is not None else self.canonical()


def _round_away(x: Fraction) -> int:
    """Round to an integer away from zero (Kubernetes' "round up" for quantities)."""
    n, d = x.numerator, x.denominator
    if d == 1:
        return n
    q = -((-abs(n)) // d)
    return q if n > 0 else -q


def _parse_quantity_string(s: str) -> tuple[bool, str, str, str, str]:
    """Scan s like Kubernetes' parseQuantityString: (positive, value, num, denom, suffix)."""
    positive = True
    pos = 0
    end = len(s)
    if pos < end:
        if s[0] == "-":
            positive = False
            pos += 1
        elif s[0] == "+":
            pos += 1
    # strip leading zeros
    i = pos
    while True:
        if i >= end:
            return positive, "0", "0", "", ""
        if s[i] != "0":
            break
        pos += 1
        i += 1
    # numerator
    i = pos
    while True:
        if i >= end:
            return positive, s, s[pos:] or "0", "", ""
        if s[i] not in _DIGITS:
            num = s[pos:i]
            pos = i
            break
        i += 1
    if not num:
        num = "0"
    denom = ""
    if pos < end and s[pos] == ".":
        pos += 1
        i = pos
        while True:
            if i >= end:
                return positive, s, num, s[pos:], ""
            if s[i] not in _DIGITS:
                denom = s[pos:i]
                pos = i
                break
            i += 1
    value = s[:pos]
    suffix_start = pos
    i = pos
    while True:
        if i >= end:
            return positive, value, num, denom, s[suffix_start:]
        if s[i] not in _SUFFIX_CHARS:
            pos = i
            break
        i += 1
    if pos < end and s[pos] in "+-":
        pos += 1
    for i in range(pos, end):
        if s[i] not in _DIGITS:
            raise ValueError(ERR_FORMAT_WRONG)
    return positive, value, num, denom, s[suffix_start:]


def _interpret_suffix(suffix: str) -> tuple[int, int, str]:
    """Map a suffix to (base, exponent, format) like quantitySuffixer.interpret."""
    e = _DEC_SUFFIXES.get(suffix)
    if e is not None:
        return 10, e, DECIMAL_SI
    e = _BIN_SUFFIXES.get(suffix)
    if e is not None:
        return 2, e, BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE":
        digits = suffix[1:]
        body = digits[1:] if digits[0] in "+-" else digits
        if body and all(c in _DIGITS for c in body):
            exp = int(digits)
            # the exponent is stored in an int32 scale and later negated: reject, don't truncate
            if INT32_MIN + 1 <= exp <= INT32_MAX:
                return 10, exp, DECIMAL_EXPONENT
    raise ValueError(ERR_SUFFIX)


def _decimal_fraction(value: str) -> Fraction:
    """Parse a signed decimal such as "-1.5", "1." or ".5" exactly (inf.Dec.SetString)."""
    sign = -1 if value.startswith("-") else 1
    body = value.lstrip("+-")
    whole, _, frac = body.partition(".")
    if not whole and not frac:
        raise ValueError(ERR_NUMERIC)
    return sign * Fraction(int(whole or "0") * 10 ** len(frac) + int(frac or "0"), 10 ** len(frac))


def _round_to_nano(amount: Fraction) -> Fraction:
    """Round a non-zero amount away from zero to a multiple of 1e-9."""
    if (_NANO % amount.denominator) == 0:
        return amount
    return Fraction(_round_away(amount * _NANO), _NANO)


def parse_quantity(s: str) -> Quantity:
    """Parse s exactly like Kubernetes ParseQuantity; raises ValueError with Kubernetes' message."""
    if not s:
        raise ValueError(ERR_FORMAT_WRONG)
    if s == "0":
        return Quantity(Fraction(0), DECIMAL_SI, s)
    positive, value, num, denom, suf = _parse_quantity_string(s)
    if len(num) + len(denom) > _MAX_MATERIALISED_DIGITS:
        raise ValueError(ERR_NUMERIC)
    base, exponent, fmt = _interpret_suffix(suf)

    precision = 0
    scale = 0
    mantissa = 1
    if fmt == BINARY_SI:
        if exponent >= 0 and not denom:
            mantissa = 1 << exponent
            precision = 15 - len(num) - (exponent * 3 // 10) - 1
        else:
            precision = -1
    else:
        scale = exponent
        precision = 18 - (len(num) + len(denom))

    if precision >= 0:
        scale -= len(denom)
        if scale >= -9:
            shifted = num + denom
            ivalue = int(shifted)
            result = ivalue * mantissa
            if result <= INT64_MAX:
                if scale > _MAX_MATERIALISED_EXPONENT and result != 0:
                    raise ValueError(ERR_NUMERIC)
                amount = Fraction(result if positive else -result) * (Fraction(10) ** scale)
                keep = False
                if fmt == BINARY_SI:
                    keep = exponent % 10 == 0 and (ivalue & 0x07) != 0
                else:
                    keep = scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0"
                return Quantity(amount, fmt, s if keep else None)

    amount = _slow_amount(value, base, exponent, fmt)
    if fmt == BINARY_SI and amount != 0 and abs(amount) < 1:
        # avoids rounding and confusion, as Kubernetes does
        fmt = DECIMAL_SI
    return Quantity(amount, fmt, None)


def _slow_amount(value: str, base: int, exponent: int, fmt: str) -> Fraction:
    """The exact value times the suffix, rounded away from zero to nano, BinarySI capped at 2^63-1."""
    number = _decimal_fraction(value)
    if number == 0:
        return number
    sign = 1 if number > 0 else -1
    if base == 10 and exponent < -(len(value) + 20):
        # far below a nano: any non-zero value rounds up to exactly 1n
        return Fraction(sign, _NANO)
    if base == 10 and exponent > _MAX_MATERIALISED_EXPONENT:
        raise ValueError(ERR_NUMERIC)
    amount = abs(number) * (Fraction(10) ** exponent if base == 10 else (1 << exponent))
    amount = _round_to_nano(amount)
    if fmt == BINARY_SI and amount > INT64_MAX:
        amount = Fraction(INT64_MAX)
    return sign * amount


def _decimal_parts(amount: Fraction) -> tuple[int, int]:
    """(mantissa, exponent) with exponent a multiple of 3, as AsCanonicalBytes computes them."""
    num, den, exp = amount.numerator, amount.denominator, 0
    power = 1
    # parsed amounts are multiples of 1e-9, so the denominator divides a small power of ten
    while power % den != 0:
        if exp < -64:
            raise ValueError("quantity is not a finite decimal")
        power *= 10
        exp -= 1
    num *= power // den
    while num % 10 == 0:
        num //= 10
        exp += 1
    shift = exp % 3
    return num * 10**shift, exp - shift


def _format_decimal(amount: Fraction, fmt: str) -> str:
    """DecimalSI / DecimalExponent rendering; out-of-range SI exponents use exponent notation."""
    number, exp = _decimal_parts(amount)
    if fmt == DECIMAL_SI and exp in _DEC_BY_EXP:
        return f"{number}{_DEC_BY_EXP[exp]}"
    return f"{number}" if exp == 0 else f"{number}e{exp}"


def _canonicalize(amount: Fraction, fmt: str) -> str:
    """Port of Quantity.CanonicalizeBytes."""
    if amount == 0:
        return "0"
    if fmt == BINARY_SI:
        if -1024 < amount < 1024 or amount.denominator != 1:
            return _format_decimal(amount, DECIMAL_SI)
        number, exp = amount.numerator, 0
        while number % 1024 == 0:
            number //= 1024
            exp += 10
        if exp == 0:
            return str(number)
        if exp in _BIN_BY_EXP:
            return f"{number}{_BIN_BY_EXP[exp]}"
        # no binary suffix past Ei: fall back to an exact decimal rendering
        return _format_decimal(amount, DECIMAL_EXPONENT)
    if fmt not in (DECIMAL_SI, DECIMAL_EXPONENT):
        fmt = DECIMAL_EXPONENT
    return _format_decimal(amount, fmt)


@functools.lru_cache(maxsize=65536)
def cached_quantity(s: str) -> Quantity:
    """parse_quantity with a cache: manifests repeat the same few quantity strings."""
    return parse_quantity(s)


@functools.lru_cache(maxsize=65536)
def quantity_value(s: str) -> int:
    """Value() of the quantity string s (cached)."""
    return cached_quantity(s).value()


@functools.lru_cache(maxsize=65536)
def quantity_milli_value(s: str) -> int:
    """MilliValue() of the quantity string s (cached)."""
    return cached_quantity(s).milli_value()


@functools.lru_cache(maxsize=65536)
def canonical_quantity(s: str) -> str:
    """The string Kubernetes serializes after parsing s (cached)."""
    return str(cached_quantity(s))


@functools.lru_cache(maxsize=65536)
def quantity_nano_value(s: str) -> int:
    """The quantity string s in exact nano-units (parsed values are always whole nanos)."""
    amount = cached_quantity(s).amount
    return _round_away(amount * _NANO)


def _div_away(n: int, d: int) -> int:
    """n / d rounded away from zero, in integers."""
    q, r = divmod(abs(n), d)
    if r:
        q += 1
    return q if n >= 0 else -q


def _int64(n: int) -> int:
    # Value()/MilliValue() are int64 in kube, and a quantity beyond that overflows them ("undefined",
    # quantity.go). Saturating keeps such a value the largest there is, in the range every plugin's
    # arithmetic (float included: 1e400 is a valid quantity) works with.
    return min(max(n, INT64_MIN), INT64_MAX)


def nano_to_value(nanos: int) -> int:
    """Value() of a quantity given in nano-units (rounded away from zero), saturated to int64."""
    return _int64(_div_away(nanos, _NANO))


def nano_to_milli(nanos: int) -> int:
    """MilliValue() of a quantity given in nano-units (rounded away from zero), saturated to int64."""
    return _int64(_div_away(nanos, _NANO // 1000))


# ----- Value() and MilliValue() as kube computes them, overflow included ---------------------------------------------

_TWO64 = 1 << 64


def _wrap64(x: int) -> int:
    """x in Go's int64 arithmetic: the low 64 bits, two's complement (a wrapped product, big.Int.Int64)."""
    return ((x + (1 << 63)) % _TWO64) - (1 << 63)


def _go_quo_rem(a: int, b: int) -> tuple[int, int]:
    """Go's int64 / and %: truncated toward zero."""
    q = abs(a) // abs(b)
    q = q if (a >= 0) == (b > 0) else -q
    return q, a - q * b


def _positive_scale_int64(base: int, scale: int) -> int:
    """positiveScaleInt64's value (ScaledValue ignores its ok): the scales kube special-cases (1, 2, 3, 6, 9)
    return the wrapped product on overflow, the others 0."""
    if scale == 0:
        return base
    if scale in (1, 2, 3, 6, 9):
        return 0 if base == INT64_MIN else _wrap64(base * 10**scale)
    if base == 0:
        return 0
    # Any non-zero int64 times 10^19 overflows: the loop gives up, and the value is 0.
    value = base * 10**min(scale, 19)
    return value if scale < 19 and INT64_MIN <= value <= INT64_MAX else 0


def _negative_scale_int64(base: int, scale: int) -> int:
    """negativeScaleInt64: base / 10^scale rounded away from zero."""
    value, fraction = base, False
    for _ in range(scale):
        q, r = _go_quo_rem(value, 10)
        fraction = fraction or r != 0
        value = q
        if value == 0:
            return (1 if base > 0 else -1) if fraction else 0
    if fraction:
        value += 1 if base > 0 else -1
    return value


def _dec_scaled_value(unscaled: int, scale: int, new_scale: int) -> int:
    """scale_int.go's scaledValue: an inf.Dec (unscaled * 10^-scale) as ceil(value * 10^new_scale) in int64,
    wrapping where kube's arithmetic wraps."""
    dif = scale - new_scale
    if dif == 0:
        return _wrap64(unscaled)
    if dif < 0:
        # int64(math.Pow10(n)) of a float past int64 is MinInt64 on amd64, where kube-scheduler runs.
        factor = 10**-dif if -dif <= 18 else INT64_MIN
        return _wrap64(_wrap64(unscaled) * factor)
    if unscaled < INT64_MAX and dif < 19:
        q, r = _go_quo_rem(_wrap64(unscaled), 10**dif)
        return q + 1 if r != 0 else q
    # big.Int.DivMod is Euclidean (the remainder never negative), as Python's divmod by a positive divisor.
    q, r = divmod(unscaled, 10**dif)
    return _wrap64(_wrap64(q) + 1) if r != 0 else _wrap64(q)


@functools.lru_cache(maxsize=4096)
def kube_scaled_value(s: str, scale: int) -> int:
    """resource.Quantity.ScaledValue of the quantity string s: scale 0 is Value(), -3 MilliValue().

    The exact value when it fits in an int64, and beyond that what kube's int64 arithmetic makes of it,
    which is not a saturation: "1e30" has a Value() and MilliValue() of 0 (the multiplication by ten
    gives up), "9223372036854775807" a MilliValue() of -1000 (wrapped). kube-scheduler's NodeInfo
    takes a node's allocatable through these, so a node that reports such a quantity has that much of
    the resource to kube-scheduler, and here. ValueError for what ParseQuantity refuses."""
    if not s:
        raise ValueError(ERR_FORMAT_WRONG)
    positive, value, num, denom, suf = _parse_quantity_string(s)
    base, exponent, fmt = _interpret_suffix(suf)
    # ParseQuantity's int64Amount path: up to 18 digits, a scale of at least nano, a product within int64.
    if fmt == BINARY_SI:
        fits = exponent >= 0 and not denom and 15 - len(num) - (exponent * 3 // 10) - 1 >= 0
        amount_scale = 0
    else:
        fits = 18 - (len(num) + len(denom)) >= 0
        amount_scale = exponent - len(denom)
    if fits and amount_scale >= -9:
        result = int(num + denom) * (1 << exponent if fmt == BINARY_SI else 1)
        if result <= INT64_MAX:
            result = result if positive else -result
            if amount_scale < scale:
                return _negative_scale_int64(result, scale - amount_scale)
            return _positive_scale_int64(result, amount_scale - scale)
    # The inf.Dec path: the value rounded up to nano (scale 9), or BinarySI capped at MaxInt64 (scale 0).
    if len(num) + len(denom) > _MAX_MATERIALISED_DIGITS:
        raise ValueError(ERR_NUMERIC)
    if base == 10 and exponent > _MAX_MATERIALISED_EXPONENT:
        # Far past any int64: only the low 64 bits of value * 10^(exponent - scale) matter (it is an integer).
        digits = int(num + denom)
        low = digits * pow(10, exponent - len(denom) - scale, _TWO64) % _TWO64
        return _wrap64(low if positive else -low)
    amount = _slow_amount(value, base, exponent, fmt)
    if fmt == BINARY_SI and abs(amount) == INT64_MAX:
        return _dec_scaled_value(int(amount), 0, -scale)
    nanos = amount * _NANO
    return _dec_scaled_value(int(nanos), 9, -scale)


def kube_value(s: str) -> int:
    """Quantity.Value() in kube's int64 arithmetic (kube_scaled_value)."""
    return kube_scaled_value(s, 0)


def kube_milli_value(s: str) -> int:
    """Quantity.MilliValue() in kube's int64 arithmetic (kube_scaled_value)."""
    return kube_scaled_value(s, -3)


def kube_value_overflows(s: str, scale: int) -> bool:
    """Whether ScaledValue(scale) of s is past int64, so that kube_scaled_value is not the exact value."""
    value = kube_scaled_value(s, scale)
    try:
        q = cached_quantity(s)
    except ValueError:
        return True  # refused here only for an exponent or numeral far past int64
    return _round_away(q.amount * Fraction(10) ** -scale) != value
