"""The part of k8s.io/csi-translation-lib v0.37.2 (translate.go, plugins/*.go) that NodeVolumeLimits uses.

The library maps the seven in-tree volume plugins it knows to the CSI drivers that replaced them and
translates their volume sources. NodeVolumeLimits only needs, of a translated volume, the CSI driver
name and volume handle (and whether the translation fails), so `translate_*` return those two strings
instead of a whole translated PersistentVolume; the topology, access-mode and attribute rewriting the
library also does never changes either of them (translateTopologyFromInTreeToCSI cannot fail).

The library walks a Go map of its plugins, so for an (invalid) volume with several in-tree sources
set the plugin it picks is random; here it is the first of `_PLUGINS` that supports the volume.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from wasmsched.api.types import PersistentVolume

if TYPE_CHECKING:
    # v1.Volume, not re-exported by wasmsched.api.types: only its type is needed here.
    from wasmsched.api.gen.k8s_io.api.core.v1.generated_pb2 import AzureDiskVolumeSource, Volume

# In-tree plugin and CSI driver names (plugins/*.go).
AWS_EBS_DRIVER_NAME = "ebs.csi.aws.com"
AWS_EBS_IN_TREE_PLUGIN_NAME = "kubernetes.io/aws-ebs"
GCE_PD_DRIVER_NAME = "pd.csi.storage.gke.io"
GCE_PD_IN_TREE_PLUGIN_NAME = "kubernetes.io/gce-pd"
CINDER_DRIVER_NAME = "cinder.csi.openstack.org"
CINDER_IN_TREE_PLUGIN_NAME = "kubernetes.io/cinder"
AZURE_DISK_DRIVER_NAME = "disk.csi.azure.com"
AZURE_DISK_IN_TREE_PLUGIN_NAME = "kubernetes.io/azure-disk"
AZURE_FILE_DRIVER_NAME = "file.csi.azure.com"
AZURE_FILE_IN_TREE_PLUGIN_NAME = "kubernetes.io/azure-file"
VSPHERE_DRIVER_NAME = "csi.vsphere.vmware.com"
VSPHERE_IN_TREE_PLUGIN_NAME = "kubernetes.io/vsphere-volume"
PORTWORX_DRIVER_NAME = "pxd.portworx.com"
PORTWORX_VOLUME_PLUGIN_NAME = "kubernetes.io/portworx-volume"

# v1.LabelTopologyZone / v1.LabelFailureDomainBetaZone, and plugins/const.go's labelMultiZoneDelimiter.
_LABEL_TOPOLOGY_ZONE = "topology.kubernetes.io/zone"
_LABEL_FAILURE_DOMAIN_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
_LABEL_MULTI_ZONE_DELIMITER = "__"

# gce_pd.go's volume ID formats and UnspecifiedValue.
_GCE_UNSPECIFIED = "UNSPECIFIED"


class TranslationError(Exception):
    """A translation the library refuses (its functions' non-nil error); the message is Go's."""


@dataclass(frozen=True, slots=True)
class CSISource:
    """The CSIPersistentVolumeSource fields of a translated volume that NodeVolumeLimits reads."""

    driver: str
    volume_handle: str


@dataclass(frozen=True, slots=True)
class _InTreePlugin:
    in_tree_name: str
    csi_name: str
    field: str  # the VolumeSource / PersistentVolumeSource field the plugin supports
    translate_pv: Callable[[PersistentVolume], str]  # -> volume handle
    translate_inline: Callable[[Volume, str], str]  # (Volume, pod namespace) -> volume handle


# --- Go helpers -------------------------------------------------------------------------------------


def go_quote(s: str) -> str:
    """strconv.Quote, for the ASCII and printable text these messages hold."""
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch in "\a\b\f\n\r\t\v":
            out.append({"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t",
                        "\v": "\\v"}[ch])
        elif o < 0x20 or o == 0x7F:
            out.append(f"\\x{o:02x}")
        elif not ch.isprintable():
            out.append(f"\\u{o:04x}" if o <= 0xFFFF else f"\\U{o:08x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


class _URLError(Exception):
    pass


_HEX = "0123456789abcdefABCDEF"
# Bytes net/url's shouldEscape(c, encodeHost) lets through besides letters, digits and "-_.~".
_HOST_OK = set("!$&'()*+,;=:[]<>\"") | set("-_.~")


def _unescape(s: str, host: bool) -> str:
    """net/url's unescape in encodePath / encodeHost mode: validates, then decodes the %-escapes."""
    i = 0
    out = bytearray()
    while i < len(s):
        c = s[i]
        if c == "%":
            if i + 2 >= len(s) or s[i + 1] not in _HEX or s[i + 2] not in _HEX:
                bad = s[i:i + 3]
                raise _URLError(f"invalid URL escape {go_quote(bad)}")
            # RFC 3986: in a host, %-encoding is only for non-ASCII bytes (and %25 for IPv6 zones).
            if host and int(s[i + 1], 16) < 8 and s[i:i + 3] != "%25":
                raise _URLError(f"invalid URL escape {go_quote(s[i:i + 3])}")
            out.append(int(s[i + 1:i + 3], 16))
            i += 3
            continue
        if host and ord(c) < 0x80 and not (c.isalnum() or c in _HOST_OK):
            raise _URLError(f"invalid character {go_quote(c)} in host name")
        out.extend(c.encode())
        i += 1
    return out.decode("utf-8", errors="surrogateescape")


def _valid_optional_port(port: str) -> bool:
    if port == "":
        return True
    if port[0] != ":":
        return False
    return all("0" <= b <= "9" for b in port[1:])


def _parse_host(host: str) -> None:
    """net/url's parseHost, for its errors only (the host is not used)."""
    if host.startswith("["):
        i = host.rfind("]")
        if i < 0:
            raise _URLError("missing ']' in host")
        colon_port = host[i + 1:]
        if not _valid_optional_port(colon_port):
            raise _URLError(f"invalid port {go_quote(colon_port)} after host")
        return
    i = host.rfind(":")
    if i != -1:
        colon_port = host[i:]
        if not _valid_optional_port(colon_port):
            raise _URLError(f"invalid port {go_quote(colon_port)} after host")
    _unescape(host, True)


_USERINFO_OK = set("-._:~!$&'()*+,;=%@")


def _aws_url_path(raw: str) -> str:
    """url.Parse(raw).Path for a raw URL that starts with "aws://", raising Go's parse errors."""
    try:
        u, _, frag = raw.partition("#")
        if any(ord(c) < 0x20 or ord(c) == 0x7F for c in u):
            raise _URLError("net/url: invalid control character in URL")
        rest = u[len("aws:"):]
        rest = rest.partition("?")[0]
        rest = rest[2:]
        slash = rest.find("/")
        authority, path = (rest, "") if slash < 0 else (rest[:slash], rest[slash:])
        at = authority.rfind("@")
        if at >= 0:
            if not all(c.isalnum() or c in _USERINFO_OK for c in authority[:at]):
                raise _URLError("net/url: invalid userinfo")
            _unescape(authority[:at], False)
            _parse_host(authority[at + 1:])
        else:
            _parse_host(authority)
        decoded = _unescape(path, False)
        if frag:
            _unescape(frag, False)
    except _URLError as e:
        raise _URLError(f"parse {go_quote(raw)}: {e}") from None
    return decoded


_AWS_VOLUME_RE = re.compile(r"vol-[^/]*")


def kubernetes_volume_id_to_ebs_volume_id(kubernetes_id: str) -> str:
    """KubernetesVolumeIDToEBSVolumeID (aws_ebs.go): aws://<zone>/<id>, aws:///<id> or a bare id."""
    if not kubernetes_id.startswith("aws://"):
        return kubernetes_id
    try:
        path = _aws_url_path(kubernetes_id)
    except _URLError as e:
        raise TranslationError(f"Invalid disk name ({kubernetes_id}): {e}") from None
    aws_id = path.strip("/")
    if not _AWS_VOLUME_RE.fullmatch(aws_id):
        raise TranslationError(f"Invalid format for AWS volume ({kubernetes_id})")
    return aws_id


def _go_string_set(items: set[str]) -> str:
    """%v of a sets.String: map[a:{} b:{}] with sorted keys."""
    return "map[" + " ".join(f"{k}:{{}}" for k in sorted(items)) + "]"


def gce_get_region_from_zones(zones: list[str]) -> str:
    """gceGetRegionFromZones (gce_pd.go): the one region of {locale}-{region}-{zone} zones."""
    if not zones:
        raise TranslationError("no zones specified")
    regions: set[str] = set()
    for zone in zones:
        split = zone.split("-")
        if len(split) != 3:
            raise TranslationError(
                f"zone in unexpected format, expected: {{locale}}-{{region}}-{{zone}}, got: {zone}")
        regions.add("-".join(split[:2]))
    if len(regions) != 1:
        raise TranslationError(f"multiple or no regions gotten from zones, got: {_go_string_set(regions)}")
    return next(iter(regions))


_AZURE_FILE_SECRET_NAME_RE = re.compile(r"azure-storage-account-(.+)-secret")


def _azure_file_account_name(secret_name: str) -> str:
    """getStorageAccountName, falling back to the secret name as both translations do on error."""
    m = _AZURE_FILE_SECRET_NAME_RE.search(secret_name)
    return m.group(1) if m else secret_name


def _azure_disk_check_kind(src: AzureDiskVolumeSource) -> None:
    # AzureDataDiskKind "Managed" is the only kind CSI migration supports.
    if src.HasField("kind") and src.kind.lower() != "managed":
        raise TranslationError(f"kind({src.kind}) is not supported in csi migration")


# --- per-plugin volume handles ----------------------------------------------------------------------


def _aws_ebs_pv(pv: PersistentVolume) -> str:
    try:
        return kubernetes_volume_id_to_ebs_volume_id(pv.spec.persistentVolumeSource.awsElasticBlockStore.volumeID)
    except TranslationError as e:
        raise TranslationError(f"failed to translate Kubernetes ID to EBS Volume ID {e}") from None


def _aws_ebs_inline(vol: Volume, _ns: str) -> str:
    try:
        return kubernetes_volume_id_to_ebs_volume_id(vol.volumeSource.awsElasticBlockStore.volumeID)
    except TranslationError as e:
        raise TranslationError(f"failed to translate Kubernetes ID to EBS Volume ID {e}") from None


def _gce_pd_pv(pv: PersistentVolume) -> str:
    pd_name = pv.spec.persistentVolumeSource.gcePersistentDisk.pdName
    labels = pv.metadata.labels
    zones_label = labels.get(_LABEL_FAILURE_DOMAIN_BETA_ZONE, "") or labels.get(_LABEL_TOPOLOGY_ZONE, "")
    zones = zones_label.split(_LABEL_MULTI_ZONE_DELIMITER)
    if len(zones) == 1 and zones[0]:
        return f"projects/{_GCE_UNSPECIFIED}/zones/{zones[0]}/disks/{pd_name}"
    if len(zones) > 1:
        try:
            region = gce_get_region_from_zones(zones)
        except TranslationError as e:
            raise TranslationError(f"failed to get region from zones: {e}") from None
        return f"projects/{_GCE_UNSPECIFIED}/regions/{region}/disks/{pd_name}"
    return f"projects/{_GCE_UNSPECIFIED}/zones/{_GCE_UNSPECIFIED}/disks/{pd_name}"


def _gce_pd_inline(vol: Volume, _ns: str) -> str:
    pd_name = vol.volumeSource.gcePersistentDisk.pdName
    return f"projects/{_GCE_UNSPECIFIED}/zones/{_GCE_UNSPECIFIED}/disks/{pd_name}"


def _cinder_pv(pv: PersistentVolume) -> str:
    return str(pv.spec.persistentVolumeSource.cinder.volumeID)


def _cinder_inline(vol: Volume, _ns: str) -> str:
    return str(vol.volumeSource.cinder.volumeID)


def _azure_disk_pv(pv: PersistentVolume) -> str:
    src = pv.spec.persistentVolumeSource.azureDisk
    _azure_disk_check_kind(src)
    return str(src.diskURI)


def _azure_disk_inline(vol: Volume, _ns: str) -> str:
    src = vol.volumeSource.azureDisk
    _azure_disk_check_kind(src)
    return str(src.diskURI)


def _azure_file_pv(pv: PersistentVolume) -> str:
    src = pv.spec.persistentVolumeSource.azureFile
    account = _azure_file_account_name(src.secretName)
    resource_group = pv.metadata.annotations.get("kubernetes.io/azure-file-resource-group", "")
    # The secret's namespace: the source's, else the claim's (the pod cannot be looked up here).
    if src.HasField("secretNamespace"):
        namespace = src.secretNamespace
    elif pv.spec.HasField("claimRef"):
        namespace = pv.spec.claimRef.namespace
    else:
        namespace = ""
    if not namespace:
        raise TranslationError("could not find a secret namespace in PersistentVolumeSource or ClaimRef")
    return f"{resource_group}#{account}#{src.shareName}#{pv.metadata.name}#{namespace}"


def _azure_file_inline(vol: Volume, pod_namespace: str) -> str:
    src = vol.volumeSource.azureFile
    account = _azure_file_account_name(src.secretName)
    secret_namespace = pod_namespace or "default"
    return f"#{account}#{src.shareName}#{vol.name}#{secret_namespace}"


def _vsphere_pv(pv: PersistentVolume) -> str:
    return str(pv.spec.persistentVolumeSource.vsphereVolume.volumePath)


def _vsphere_inline(vol: Volume, _ns: str) -> str:
    src = vol.volumeSource.vsphereVolume
    if src.storagePolicyName:
        # vsphere_volume.go reads the policy from the new PV's (nil) VsphereVolume source: a nil
        # pointer dereference, so kube panics on such a volume. Refuse it instead of panicking.
        raise TranslationError(
            "runtime error: invalid memory address or nil pointer dereference "
            "(csi-translation-lib's vSphere inline translation with storagePolicyName)")
    return str(src.volumePath)


def _portworx_pv(pv: PersistentVolume) -> str:
    return str(pv.spec.persistentVolumeSource.portworxVolume.volumeID)


def _portworx_inline(vol: Volume, _ns: str) -> str:
    return str(vol.volumeSource.portworxVolume.volumeID)


# translate.go's inTreePlugins, keyed there by CSI driver name.
_PLUGINS: tuple[_InTreePlugin, ...] = (
    _InTreePlugin(GCE_PD_IN_TREE_PLUGIN_NAME, GCE_PD_DRIVER_NAME, "gcePersistentDisk", _gce_pd_pv, _gce_pd_inline),
    _InTreePlugin(AWS_EBS_IN_TREE_PLUGIN_NAME, AWS_EBS_DRIVER_NAME, "awsElasticBlockStore", _aws_ebs_pv,
                  _aws_ebs_inline),
    _InTreePlugin(CINDER_IN_TREE_PLUGIN_NAME, CINDER_DRIVER_NAME, "cinder", _cinder_pv, _cinder_inline),
    _InTreePlugin(AZURE_DISK_IN_TREE_PLUGIN_NAME, AZURE_DISK_DRIVER_NAME, "azureDisk", _azure_disk_pv,
                  _azure_disk_inline),
    _InTreePlugin(AZURE_FILE_IN_TREE_PLUGIN_NAME, AZURE_FILE_DRIVER_NAME, "azureFile", _azure_file_pv,
                  _azure_file_inline),
    _InTreePlugin(VSPHERE_IN_TREE_PLUGIN_NAME, VSPHERE_DRIVER_NAME, "vsphereVolume", _vsphere_pv, _vsphere_inline),
    _InTreePlugin(PORTWORX_VOLUME_PLUGIN_NAME, PORTWORX_DRIVER_NAME, "portworxVolume", _portworx_pv,
                  _portworx_inline),
)
_BY_IN_TREE_NAME = {p.in_tree_name: p for p in _PLUGINS}


def _pv_plugin(pv: PersistentVolume | None) -> _InTreePlugin | None:
    if pv is None:
        return None
    src = pv.spec.persistentVolumeSource
    return next((p for p in _PLUGINS if src.HasField(p.field)), None)


def _inline_plugin(vol: Volume | None) -> _InTreePlugin | None:
    if vol is None:
        return None
    src = vol.volumeSource
    return next((p for p in _PLUGINS if src.HasField(p.field)), None)


class CSITranslator:
    """csitrans.CSITranslator: the methods of InTreeToCSITranslator (nodevolumelimits/csi.go)."""

    def is_pv_migratable(self, pv: PersistentVolume) -> bool:
        return _pv_plugin(pv) is not None

    def is_inline_migratable(self, vol: Volume) -> bool:
        return _inline_plugin(vol) is not None

    def is_migratable_intree_plugin_by_name(self, in_tree_plugin_name: str) -> bool:
        return in_tree_plugin_name in _BY_IN_TREE_NAME

    def get_in_tree_plugin_name_from_spec(self, pv: PersistentVolume | None, vol: Volume | None) -> str:
        if pv is not None:
            p = _pv_plugin(pv)
            if p is None:
                raise TranslationError(f"could not find in-tree plugin name from persistent volume {pv.metadata.name}")
            return p.in_tree_name
        if vol is not None:
            p = _inline_plugin(vol)
            if p is None:
                raise TranslationError(f"could not find in-tree plugin name from volume {vol.name}")
            return p.in_tree_name
        raise TranslationError("both persistent volume and volume are nil")

    def get_csi_name_from_in_tree_name(self, plugin_name: str) -> str:
        p = _BY_IN_TREE_NAME.get(plugin_name)
        if p is None:
            raise TranslationError(f"could not find CSI Driver name for plugin {plugin_name}")
        return p.csi_name

    def translate_in_tree_pv_to_csi(self, pv: PersistentVolume) -> CSISource:
        """TranslateInTreePVToCSI, reduced to the translated PV's spec.csi driver and handle."""
        p = _pv_plugin(pv)
        if p is None:
            raise TranslationError(f"could not find in-tree plugin translation logic for {go_quote(pv.metadata.name)}")
        return CSISource(p.csi_name, p.translate_pv(pv))

    def translate_in_tree_inline_volume_to_csi(self, vol: Volume, pod_namespace: str) -> CSISource:
        """TranslateInTreeInlineVolumeToCSI, reduced to the translated PV's spec.csi driver and handle."""
        p = _inline_plugin(vol)
        if p is None:
            raise TranslationError(
                f"could not find in-tree plugin translation logic for {go_quote(vol.name)}")
        return CSISource(p.csi_name, p.translate_inline(vol, pod_namespace))
