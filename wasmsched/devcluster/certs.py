"""The dev cluster's PKI, made with `cryptography`: a CA, a serving certificate for 127.0.0.1/localhost
signed by it, and the service-account key pair that signs and verifies ServiceAccount tokens."""

from __future__ import annotations

import datetime
import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

# A dev cluster lives for hours; a year leaves room for one left running without making it a long-lived CA.
VALIDITY = datetime.timedelta(days=365)


@dataclass(frozen=True)
class Pki:
    ca_cert: Path
    ca_key: Path
    serving_cert: Path
    serving_key: Path
    sa_public_key: Path
    sa_private_key: Path


def _write(path: Path, data: bytes, private: bool = False) -> None:
    # Keys are created 0600 from the start, never readable by others even briefly.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600 if private else 0o644)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def _key_pem(key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def make_ca(common_name: str = "wasmsched-dev-cluster-ca") -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder()
            .subject_name(_name(common_name)).issuer_name(_name(common_name))
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + VALIDITY)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                         content_commitment=False, key_encipherment=False, data_encipherment=False,
                                         key_agreement=False, encipher_only=False, decipher_only=False),
                           critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
            .sign(key, hashes.SHA256()))
    return cert, key


def make_serving_cert(ca_cert: x509.Certificate, ca_key: ec.EllipticCurvePrivateKey,
                      common_name: str = "kube-apiserver") -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    """A server certificate valid for 127.0.0.1, ::1 and localhost (the only addresses the cluster binds)."""
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    sans: list[x509.GeneralName] = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                                    x509.IPAddress(ipaddress.ip_address("::1"))]
    cert = (x509.CertificateBuilder()
            .subject_name(_name(common_name)).issuer_name(ca_cert.subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + VALIDITY)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_encipherment=False, key_cert_sign=False,
                                         crl_sign=False, content_commitment=False, data_encipherment=False,
                                         key_agreement=False, encipher_only=False, decipher_only=False),
                           critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.SubjectAlternativeName(sans), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))
    return cert, key


def write_pki(directory: Path) -> Pki:
    """Makes a fresh CA, serving certificate and service-account key pair in `directory`."""
    directory.mkdir(parents=True, exist_ok=True)
    pki = Pki(ca_cert=directory / "ca.crt", ca_key=directory / "ca.key",
              serving_cert=directory / "apiserver.crt", serving_key=directory / "apiserver.key",
              sa_public_key=directory / "sa.pub", sa_private_key=directory / "sa.key")
    ca_cert, ca_key = make_ca()
    serving_cert, serving_key = make_serving_cert(ca_cert, ca_key)
    # RSA, as kubeadm makes it: every consumer of ServiceAccount tokens (RS256) accepts it.
    sa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    _write(pki.ca_cert, ca_cert.public_bytes(serialization.Encoding.PEM))
    _write(pki.ca_key, _key_pem(ca_key), private=True)
    _write(pki.serving_cert, serving_cert.public_bytes(serialization.Encoding.PEM))
    _write(pki.serving_key, _key_pem(serving_key), private=True)
    _write(pki.sa_public_key, sa_key.public_key().public_bytes(serialization.Encoding.PEM,
                                                               serialization.PublicFormat.SubjectPublicKeyInfo))
    _write(pki.sa_private_key, _key_pem(sa_key), private=True)
    return pki
