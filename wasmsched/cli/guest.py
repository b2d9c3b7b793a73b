"""`wasmsched guest push|pull`: wasm guests in OCI registries (wasm/oci, docs/deploy.md).

`push` stores a module as a CNCF wasm artifact and, with --sign-key, the cosign signature that a
plugin's `verify.publicKey` checks: one command where oras plus cosign would take two tools. `pull`
fetches a module as a plugin would (same verification, same cache) and writes it to a file.
Results go to stdout; errors to stderr, one line naming the reference.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from wasmsched.cli import color
from wasmsched.wasm.errors import WasmLoadError
from wasmsched.wasm.oci.errors import RegistryError
from wasmsched.wasm.oci.options import OciOptions
from wasmsched.wasm.oci.reference import BadReference, Reference, parse


def _registry_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--plain-http", action="store_true",
                   help="talk HTTP, not HTTPS (only to a loopback registry: 127.0.0.1, ::1, localhost)")
    p.add_argument("--registry-config", type=Path, default=None, metavar="PATH",
                   help="docker config.json with the registry's credentials (default: $DOCKER_CONFIG/config.json, "
                        "else ~/.docker/config.json)")
    p.add_argument("--ca-file", type=Path, default=None, metavar="PATH",
                   help="PEM CA bundle to verify the registry's certificate with (default: the system's)")
    p.add_argument("-v", "--v", type=int, dest="verbosity", default=argparse.SUPPRESS,
                   help="log verbosity on stderr (0: warnings, 2: info, 5: debug)")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = "Push wasm guests to, and pull them from, OCI registries (guestURL: oci://REGISTRY/REPO:TAG)."
    cmds = p.add_subparsers(dest="guest_command", required=True)
    push = cmds.add_parser("push", help="push a .wasm module as an OCI artifact, optionally cosign-signed")
    push.add_argument("file", type=Path, metavar="FILE", help="the .wasm module")
    push.add_argument("ref", metavar="oci://REGISTRY/REPO:TAG", help="where to push it")
    push.add_argument("--sign-key", type=Path, default=None, metavar="PEM",
                      help="ECDSA P-256 private key (unencrypted PEM): also push a cosign signature "
                           "(tag sha256-<hex>.sig) that `verify: {publicKey: …}` and `cosign verify --key` accept")
    _registry_options(push)
    push.set_defaults(func=run_push)
    pull = cmds.add_parser("pull", help="pull a guest as a plugin would and write it to a file")
    pull.add_argument("ref", metavar="oci://REGISTRY/REPO[:TAG][@sha256:DIGEST]", help="what to pull")
    pull.add_argument("-o", "--output", type=Path, required=True, metavar="FILE", help="where to write the module")
    pull.add_argument("--verify-key", type=Path, default=None, metavar="PEM",
                      help="cosign public key: refuse the module unless its manifest's signature verifies")
    _registry_options(pull)
    pull.set_defaults(func=run_pull)


def _reference(args: argparse.Namespace) -> Reference | None:
    try:
        ref = parse(args.ref)
    except BadReference as e:
        color.error(f"{args.ref}: {e}")
        return None
    if args.plain_http and not ref.is_loopback:
        color.error(f"{ref}: --plain-http is only for a loopback registry (127.0.0.1, ::1, localhost)")
        return None
    return ref


def _options(args: argparse.Namespace, public_key: Path | None = None) -> OciOptions:
    return OciOptions(plain_http=args.plain_http, ca_file=args.ca_file, registry_config=args.registry_config,
                      public_key=public_key)


def run_push(args: argparse.Namespace) -> int:
    from wasmsched.wasm.loader import fetch_guest
    from wasmsched.wasm.oci import cosign
    from wasmsched.wasm.oci.push import push

    ref = _reference(args)
    if ref is None:
        return 2
    if ref.digest is not None:
        color.error(f"{ref}: push to a tag, not a digest (the digest is the result)")
        return 2
    try:
        module = fetch_guest(str(args.file))
        key = cosign.load_private_key(args.sign_key) if args.sign_key is not None else None
        pushed = push(ref, module, args.file.name, _options(args), key)
    except (WasmLoadError, RegistryError) as e:
        color.error(f"{ref}: {e}")
        return 1
    print(f"pushed {ref.with_tag(ref.tag or 'latest')}@{pushed.manifest_digest}")
    if pushed.signature_digest is not None:
        print(f"signed {cosign.signature_tag(pushed.manifest_digest)}@{pushed.signature_digest}")
    return 0


def run_pull(args: argparse.Namespace) -> int:
    from wasmsched.wasm.oci.pull import pull

    ref = _reference(args)
    if ref is None:
        return 2
    try:
        data, digest = pull(ref, _options(args, args.verify_key))
    except RegistryError as e:
        color.error(f"{ref}: {e}")
        return 1
    args.output.write_bytes(data)
    print(f"pulled {ref} ({digest}, {len(data)} bytes) to {args.output}")
    return 0
