"""The secure port's certificate, chosen as k8s.io/apiserver's SecureServingOptions does: the given
cert/key files; else `<cert-dir>/<pair-name>.{crt,key}`, generated self-signed when absent and reused
when present; else a self-signed pair generated for this process only (kube-scheduler's default,
"in-memory")."""

from __future__ import annotations

import datetime
import ipaddress
import logging
import os
import secrets
import ssl
import tempfile
import time
from dataclasses import dataclass, field

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from wasmsched.util.klog import V0

log = logging.getLogger(__name__)

DEFAULT_PAIR_NAME = "kube-scheduler"
_MAX_AGE = datetime.timedelta(days=365)  # certutil's default maxAge
_INT64_MAX = (1 << 63) - 1


class CertificateError(Exception):
    """The serving certificate cannot be read, generated or written; the message names the file."""


@dataclass
class ServingCertOptions:
    """kube's --tls-cert-file/--tls-private-key-file, --cert-dir and the pair name."""

    cert_file: str | None = None
    key_file: str | None = None
    cert_dir: str | None = None
    pair_name: str = DEFAULT_PAIR_NAME
    # kube-scheduler: MaybeDefaultWithSelfSignedCerts("localhost", nil, [127.0.0.1])
    public_address: str = "localhost"
    alternate_ips: list[str] = field(default_factory=lambda: ["127.0.0.1"])
    alternate_dns: list[str] = field(default_factory=list)


def generate_self_signed_cert_key(
    host: str, alternate_ips: list[str], alternate_dns: list[str]
) -> tuple[bytes, bytes]:
    """certutil.GenerateSelfSignedCertKey: a CA `<host>-ca@<unix>` and a serving certificate
    `<host>@<unix>` signed by it, both valid from an hour ago for a year. Returns (PEM of the
    certificate followed by the CA, PEM of the certificate's RSA key)."""
    now = datetime.datetime.now(datetime.UTC)
    valid_from = now - datetime.timedelta(hours=1)  # tolerate clock skew, as certutil does
    unix = int(time.time())
    ca_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{host}-ca@{unix}")])
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(_serial())
        .not_valid_before(valid_from)
        .not_valid_after(valid_from + _MAX_AGE)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(_key_usage(cert_sign=True), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    ips: list[ipaddress.IPv4Address | ipaddress.IPv6Address] = []
    dns: list[str] = []
    try:
        ips.append(ipaddress.ip_address(host))
    except ValueError:
        dns.append(host)
    ips.extend(ipaddress.ip_address(a) for a in alternate_ips)
    dns.extend(alternate_dns)
    sans: list[x509.GeneralName] = [x509.IPAddress(a) for a in ips] + [x509.DNSName(d) for d in dns]
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{host}@{unix}")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(_serial())
        .not_valid_before(valid_from)
        .not_valid_after(valid_from + _MAX_AGE)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_key_usage(cert_sign=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectAlternativeName(sans), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    cert_pem = cert.public_bytes(serialization.Encoding.PEM) + ca_cert.public_bytes(serialization.Encoding.PEM)
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()
    )
    return cert_pem, key_pem


def _serial() -> int:
    return secrets.randbelow(_INT64_MAX - 1) + 1


def _key_usage(cert_sign: bool) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=True, content_commitment=False, key_encipherment=True, data_encipherment=False,
        key_agreement=False, key_cert_sign=cert_sign, crl_sign=False, encipher_only=False, decipher_only=False,
    )  # fmt: skip


def _readable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.R_OK)


def _write_private(path: str, data: bytes, mode: int) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def server_ssl_context(opts: ServingCertOptions, bind_address: str) -> ssl.SSLContext:
    """A TLS server context (TLS 1.2 or newer, as Go's default) with the serving certificate that
    `opts` selects; generating and writing a self-signed one when needed."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    if opts.cert_file or opts.key_file:
        if not (opts.cert_file and opts.key_file):
            raise CertificateError("a serving certificate needs both a cert file and a key file")
        _load(ctx, opts.cert_file, opts.key_file)
        return ctx
    alternate_ips = list(opts.alternate_ips)
    alternate_dns = list(opts.alternate_dns)
    # like MaybeDefaultWithSelfSignedCerts: the bind address, or localhost when it is unspecified
    if ipaddress.ip_address(bind_address).is_unspecified:
        alternate_dns.append("localhost")
    elif bind_address not in alternate_ips:
        alternate_ips.append(bind_address)
    if opts.cert_dir:
        cert_path = os.path.join(opts.cert_dir, opts.pair_name + ".crt")
        key_path = os.path.join(opts.cert_dir, opts.pair_name + ".key")
        if not (_readable(cert_path) and _readable(key_path)):
            cert_pem, key_pem = generate_self_signed_cert_key(opts.public_address, alternate_ips, alternate_dns)
            try:
                os.makedirs(opts.cert_dir, mode=0o755, exist_ok=True)
                _write_private(cert_path, cert_pem, 0o644)
                _write_private(key_path, key_pem, 0o600)
            except OSError as e:
                raise CertificateError(f"writing the self-signed certificate to {e.filename or opts.cert_dir}: "
                                       f"{e.strerror or e}") from None  # fmt: skip
            log.log(V0, '"Generated self-signed cert" certFile="%s" keyFile="%s"', cert_path, key_path)
        _load(ctx, cert_path, key_path)
        return ctx
    cert_pem, key_pem = generate_self_signed_cert_key(opts.public_address, alternate_ips, alternate_dns)
    # ssl loads certificates from files only: a private temporary directory holds them while loading
    with tempfile.TemporaryDirectory(prefix="wasmsched-cert-") as tmp:
        cert_path, key_path = os.path.join(tmp, "tls.crt"), os.path.join(tmp, "tls.key")
        _write_private(cert_path, cert_pem, 0o600)
        _write_private(key_path, key_pem, 0o600)
        _load(ctx, cert_path, key_path)
    log.log(V0, '"Generated self-signed cert in-memory"')
    return ctx


def _load(ctx: ssl.SSLContext, cert_file: str, key_file: str) -> None:
    for path in (cert_file, key_file):
        if not _readable(path):
            raise CertificateError(f"{path}: cannot read the serving certificate or key")
    try:
        ctx.load_cert_chain(cert_file, key_file)
    except (ssl.SSLError, ValueError) as e:
        raise CertificateError(f"{cert_file}, {key_file}: not a valid certificate and key pair: {e}") from None
