"""Quantity parsing and formatting, with cases from apimachinery's quantity_test.go."""

from fractions import Fraction

import pytest

from wasmsched.api.quantity import (
    BINARY_SI,
    DECIMAL_EXPONENT,
    DECIMAL_SI,
    ERR_FORMAT_WRONG,
    ERR_SUFFIX,
    kube_milli_value,
    kube_value,
    kube_value_overflows,
    nano_to_milli,
    nano_to_value,
    parse_quantity,
    quantity_milli_value,
    quantity_nano_value,
    quantity_value,
)


def dec(i: int, exp: int) -> Fraction:
    return Fraction(i) * Fraction(10) ** exp


PARSE_CASES = [
    ("0", dec(0, 0), DECIMAL_SI),
    ("0n", dec(0, 0), DECIMAL_SI),
    ("0u", dec(0, 0), DECIMAL_SI),
    ("0m", dec(0, 0), DECIMAL_SI),
    ("0Ki", dec(0, 0), BINARY_SI),
    ("0k", dec(0, 0), DECIMAL_SI),
    ("0Mi", dec(0, 0), BINARY_SI),
    ("0M", dec(0, 0), DECIMAL_SI),
    ("0Gi", dec(0, 0), BINARY_SI),
    ("0G", dec(0, 0), DECIMAL_SI),
    ("0Ti", dec(0, 0), BINARY_SI),
    ("0T", dec(0, 0), DECIMAL_SI),
    ("1", dec(1, 0), DECIMAL_SI),
    ("1Ki", dec(1024, 0), BINARY_SI),
    ("8Ki", dec(8 * 1024, 0), BINARY_SI),
    ("7Mi", dec(7 * 1024**2, 0), BINARY_SI),
    ("6Gi", dec(6 * 1024**3, 0), BINARY_SI),
    ("5Ti", dec(5 * 1024**4, 0), BINARY_SI),
    ("4Pi", dec(4 * 1024**5, 0), BINARY_SI),
    ("3Ei", dec(3 * 1024**6, 0), BINARY_SI),
    ("10Ti", dec(10 * 1024**4, 0), BINARY_SI),
    ("100Ti", dec(100 * 1024**4, 0), BINARY_SI),
    ("5n", dec(5, -9), DECIMAL_SI),
    ("4u", dec(4, -6), DECIMAL_SI),
    ("3m", dec(3, -3), DECIMAL_SI),
    ("9", dec(9, 0), DECIMAL_SI),
    ("8k", dec(8, 3), DECIMAL_SI),
    ("50k", dec(5, 4), DECIMAL_SI),
    ("7M", dec(7, 6), DECIMAL_SI),
    ("6G", dec(6, 9), DECIMAL_SI),
    ("5T", dec(5, 12), DECIMAL_SI),
    ("40T", dec(4, 13), DECIMAL_SI),
    ("300T", dec(3, 14), DECIMAL_SI),
    ("2P", dec(2, 15), DECIMAL_SI),
    ("1E", dec(1, 18), DECIMAL_SI),
    ("1E-3", dec(1, -3), DECIMAL_EXPONENT),
    ("1e3", dec(1, 3), DECIMAL_EXPONENT),
    ("1E6", dec(1, 6), DECIMAL_EXPONENT),
    ("1e9", dec(1, 9), DECIMAL_EXPONENT),
    ("1E12", dec(1, 12), DECIMAL_EXPONENT),
    ("1e15", dec(1, 15), DECIMAL_EXPONENT),
    ("1E18", dec(1, 18), DECIMAL_EXPONENT),
    ("1e14", dec(1, 14), DECIMAL_EXPONENT),
    ("1e13", dec(1, 13), DECIMAL_EXPONENT),
    ("100.035k", dec(100035, 0), DECIMAL_SI),
    ("0.001", dec(1, -3), DECIMAL_SI),
    ("0.0005k", dec(5, -1), DECIMAL_SI),
    ("0.005", dec(5, -3), DECIMAL_SI),
    ("0.05", dec(5, -2), DECIMAL_SI),
    ("0.5", dec(5, -1), DECIMAL_SI),
    ("0.00050k", dec(5, -1), DECIMAL_SI),
    ("0.00500", dec(5, -3), DECIMAL_SI),
    ("0.05000", dec(5, -2), DECIMAL_SI),
    ("0.50000", dec(5, -1), DECIMAL_SI),
    ("0.5e0", dec(5, -1), DECIMAL_EXPONENT),
    ("0.5e-1", dec(5, -2), DECIMAL_EXPONENT),
    ("0.5e-2", dec(5, -3), DECIMAL_EXPONENT),
    ("10.035M", dec(10035, 3), DECIMAL_SI),
    ("1.2e3", dec(12, 2), DECIMAL_EXPONENT),
    ("1.3E+6", dec(13, 5), DECIMAL_EXPONENT),
    ("1.40e9", dec(14, 8), DECIMAL_EXPONENT),
    ("1.53E12", dec(153, 10), DECIMAL_EXPONENT),
    ("1.6e15", dec(16, 14), DECIMAL_EXPONENT),
    ("1.7E18", dec(17, 17), DECIMAL_EXPONENT),
    ("9.01", dec(901, -2), DECIMAL_SI),
    ("8.1k", dec(81, 2), DECIMAL_SI),
    ("7.123456M", dec(7123456, 0), DECIMAL_SI),
    ("6.987654321G", dec(6987654321, 0), DECIMAL_SI),
    ("5.444T", dec(5444, 9), DECIMAL_SI),
    ("40.1T", dec(401, 11), DECIMAL_SI),
    ("300.2T", dec(3002, 11), DECIMAL_SI),
    ("2.5P", dec(25, 14), DECIMAL_SI),
    ("1.01E", dec(101, 16), DECIMAL_SI),
    # things that saturate / round up
    ("3.001n", dec(4, -9), DECIMAL_SI),
    ("1.1E-9", dec(2, -9), DECIMAL_EXPONENT),
    ("0.0000000001", dec(1, -9), DECIMAL_SI),
    ("0.0000000005", dec(1, -9), DECIMAL_SI),
    ("0.00000000050", dec(1, -9), DECIMAL_SI),
    ("0.5e-9", dec(1, -9), DECIMAL_EXPONENT),
    ("0.9n", dec(1, -9), DECIMAL_SI),
    ("0.00000012345", dec(124, -9), DECIMAL_SI),
    ("0.00000012354", dec(124, -9), DECIMAL_SI),
    ("9Ei", Fraction(2**63 - 1), BINARY_SI),
    ("9223372036854775807Ki", Fraction(2**63 - 1), BINARY_SI),
    ("12E", dec(12, 18), DECIMAL_SI),
    # fractional binary
    ("100.035Ki", dec(10243584, -2), BINARY_SI),
    ("0.5Mi", dec(512 * 1024, 0), BINARY_SI),
    ("0.05Gi", dec(536870912, -1), BINARY_SI),
    ("0.025Ti", dec(274877906944, -1), BINARY_SI),
    # things written by trolls
    ("0.000000000001Ki", dec(2, -9), DECIMAL_SI),
    (".001", dec(1, -3), DECIMAL_SI),
    (".0001k", dec(100, -3), DECIMAL_SI),
    ("1.", dec(1, 0), DECIMAL_SI),
    ("1.G", dec(1, 9), DECIMAL_SI),
    (".", dec(0, 0), DECIMAL_SI),
    ("-.", dec(0, 0), DECIMAL_SI),
]


@pytest.mark.parametrize(("text", "amount", "fmt"), PARSE_CASES)
def test_parse(text: str, amount: Fraction, fmt: str) -> None:
    q = parse_quantity(text)
    assert q.amount == amount
    assert q.format == fmt


@pytest.mark.parametrize(("text", "amount", "fmt"), [c for c in PARSE_CASES if c[1] != 0])
def test_parse_signed(text: str, amount: Fraction, fmt: str) -> None:
    assert parse_quantity("-" + text).amount == -amount
    assert parse_quantity("-" + text).format == fmt
    assert parse_quantity("+" + text).amount == amount


INVALID = [
    ("", ERR_FORMAT_WRONG),
    ("1.1.M", ERR_FORMAT_WRONG),
    ("1+1.0M", ERR_FORMAT_WRONG),
    ("0.1mi", ERR_SUFFIX),
    ("0.1am", ERR_FORMAT_WRONG),
    ("aoeu", ERR_FORMAT_WRONG),
    (".5i", ERR_SUFFIX),
    ("1i", ERR_SUFFIX),
    ("-3.01i", ERR_SUFFIX),
    ("-3.01e-", ERR_SUFFIX),
    ("1e4294967297", ERR_SUFFIX),
    ("1E2147483648", ERR_SUFFIX),
    (" 1", ERR_FORMAT_WRONG),
    ("1 ", ERR_FORMAT_WRONG),
    ("Non-Numeric", ERR_FORMAT_WRONG),
    ("100mb", ERR_FORMAT_WRONG),
]


@pytest.mark.parametrize(("text", "message"), INVALID)
def test_invalid(text: str, message: str) -> None:
    with pytest.raises(ValueError) as e:
        parse_quantity(text)
    assert str(e.value) == message


def test_error_text_matches_kubernetes() -> None:
    with pytest.raises(ValueError, match=r"quantities must match the regular expression"):
        parse_quantity("abc")
    assert ERR_FORMAT_WRONG == (
        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    )


STRING_CASES = [
    # (input, String()) from TestQuantityParseEmit / TestQuantityString
    ("1Ki", "1Ki"),
    ("1Mi", "1Mi"),
    ("1Gi", "1Gi"),
    ("1024Mi", "1Gi"),
    ("1000M", "1G"),
    (".001Ki", "1024m"),
    (".000001Ki", "1024u"),
    (".000000001Ki", "1024n"),
    (".000000000001Ki", "2n"),
    ("300Mi", "300Mi"),
    ("307200Ki", "300Mi"),
    ("1025024Mi", "1001Gi"),
    ("1024Gi", "1Ti"),
    ("5000m", "5"),
    ("0.5", "500m"),
    ("1000M", "1G"),
    ("0.001T", "1G"),
    ("1000u", "1m"),
    ("1.08", "1080m"),
    ("1080000000n", "1080m"),
    ("1000E", "1e21"),
    ("5000E", "5e21"),
    (".001e12", "1e9"),
    ("0.001e0", "1e-3"),
    ("1000e-12", "1e-9"),
    ("00", "0"),
    ("1e21", "1e21"),
    ("80e-3", "80e-3"),
    ("1.5Gi", "1536Mi"),
    ("1.5", "1500m"),
    ("100m", "100m"),
    ("0", "0"),
    ("-1Ki", "-1Ki"),
    ("-1.5", "-1500m"),
]


@pytest.mark.parametrize(("text", "expected"), STRING_CASES)
def test_string(text: str, expected: str) -> None:
    assert str(parse_quantity(text)) == expected


@pytest.mark.parametrize(
    ("text", "expected", "canonical"),
    [
        ("+1", "+1", "1"),
        ("010", "010", "10"),
        ("1.", "1.", "1"),
        ("1Ki", "1Ki", "1Ki"),
        ("1.5", "1500m", "1500m"),
    ],
)
def test_string_keeps_parsed_form_like_kubernetes(text: str, expected: str, canonical: str) -> None:
    # Kubernetes reuses the input string when its fast path deems it canonical
    assert str(parse_quantity(text)) == expected
    assert parse_quantity(text).canonical() == canonical


@pytest.mark.parametrize(
    ("text", "value", "milli"),
    [
        ("1", 1, 1000),
        ("100m", 1, 100),
        ("1.5", 2, 1500),
        ("0.1m", 1, 1),
        ("1Gi", 1024**3, 1024**3 * 1000),
        ("250m", 1, 250),
        ("1n", 1, 1),
        ("-1.5", -2, -1500),
        ("0", 0, 0),
        ("2e3", 2000, 2000000),
    ],
)
def test_value_and_milli_value(text: str, value: int, milli: int) -> None:
    q = parse_quantity(text)
    assert q.value() == value
    assert q.milli_value() == milli
    assert quantity_value(text) == value
    assert quantity_milli_value(text) == milli


def test_nano_value() -> None:
    assert quantity_nano_value("1") == 10**9
    assert quantity_nano_value("3.001n") == 4
    assert quantity_nano_value("1Ki") == 1024 * 10**9


def test_values_saturate_at_int64() -> None:
    """kube's Value()/MilliValue() are int64 (beyond, "undefined"); 1e400 is a valid quantity, and a
    scheduler must compare it, not overflow Python floats with it."""
    big = quantity_nano_value("1e400")
    assert nano_to_value(big) == 2**63 - 1
    assert nano_to_milli(big) == 2**63 - 1
    assert nano_to_milli(-big) == -(2**63)
    assert nano_to_milli(quantity_nano_value("9223372036854775807m")) == 2**63 - 1


# What k8s.io/apimachinery v0.37.2's Value() and MilliValue() return on amd64 (a Go program printed them).
@pytest.mark.parametrize(("text", "value", "milli"), [
    ("4", 4, 4000),
    ("1.5Gi", 1610612736, 1610612736000),
    ("1e30", 0, 0),  # int64Amount{1, 30}: the multiplication by ten gives up
    ("1e18", 10**18, 0),
    ("9e15", 9 * 10**15, 9 * 10**18),
    ("9223372036854775807", 2**63 - 1, -1000),  # MilliValue wraps
    ("99999999999999999999", 7766279631452241919, 200376420520688664),  # inf.Dec: the low 64 bits
    ("8Ei", 2**63 - 1, -1000),  # BinarySI capped at MaxInt64
    ("7Ei", 8070450532247928832, -(2**63)),
    ("10000000000000000k", -8446744073709551616, 1864712049423024128),
    ("1e5000", 0, 0),
    ("100e4998", 0, 0),  # how the API server writes 1e5000 back
    ("12345678901234567890e5000", 0, 0),
    ("-12345678901234567890123", -6432227780, -6432227781342),
    ("-34273167232686563Mi", -(2**63) + 1, 1000),
])
def test_kube_value_and_milli_value_wrap_as_kubes_int64_arithmetic(text: str, value: int, milli: int) -> None:
    assert (kube_value(text), kube_milli_value(text)) == (value, milli)
    assert kube_value_overflows(text, -3) == (milli != parse_milli_or_none(text))


def parse_milli_or_none(text: str) -> int | None:
    try:
        return parse_quantity(text).milli_value()
    except ValueError:
        return None
