"""Guests stored as OCI artifacts in a container registry (`guestURL: oci://…`, docs/abi.md §9).

reference: parsing `oci://REGISTRY/REPO[:TAG][@sha256:HEX]`; registry: the distribution API over urllib3
with the docker credentials and the token flow (auth); artifact: which manifest and layer hold the module;
store: the on-disk cache by digest; cosign: cosign's key-based signatures; pull and push: the two
directions. `pull.resolve` and `pull.pull` are the entry points a loader needs.
"""
