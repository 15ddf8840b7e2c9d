// SPDX-License-Identifier: LGPL-3.0-or-later
#include "flex_layout.hpp"

#include "ganesha_xdr.h"
#include "nfs4_names.hpp"
#include "xdr_stream.hpp"

#include <arpa/inet.h>
#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace flexfiles::client {

namespace {

std::optional<uint32_t> decimal_u32(const std::string& s) {
    uint32_t v = 0;
    if (s.empty() || s.size() > 10) {
        return std::nullopt;
    }
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size()) {
        return std::nullopt;
    }
    return v;
}

std::string hex_bytes(std::span<const char> b) {
    std::string out;
    char buf[3];
    for (char c : b) {
        std::snprintf(buf, sizeof(buf), "%02x", static_cast<unsigned char>(c));
        out += buf;
    }
    return out;
}

} // namespace

std::string format_deviceid(const DeviceId4& id) {
    return hex_bytes(id);
}

// ---- FlexDataServer / FlexLayout ------------------------------------------------------

std::optional<uint32_t> FlexDataServer::uid() const {
    return decimal_u32(user);
}

std::optional<uint32_t> FlexDataServer::gid() const {
    return decimal_u32(group);
}

AuthSys FlexDataServer::credentials() const {
    const auto u = uid();
    const auto g = gid();
    if (!u || !g) {
        throw std::invalid_argument("data server " + format_deviceid(deviceid) + ": ffds_user '" +
                                    user + "' / ffds_group '" + group + "' are not numeric ids");
    }
    AuthSys cred;
    cred.uid = *u;
    cred.gid = *g;
    cred.gids = {*g};
    return cred;
}

const FileHandle& FlexDataServer::fh() const {
    if (fh_versions.empty()) {
        throw std::invalid_argument("data server " + format_deviceid(deviceid) +
                                    " has no filehandle in the layout");
    }
    return fh_versions.front();
}

std::size_t FlexLayout::data_server_count() const {
    std::size_t n = 0;
    for (const FlexMirror& m : mirrors) {
        n += m.data_servers.size();
    }
    return n;
}

std::string FlexLayout::describe() const {
    const std::string mode = iomode == LAYOUTIOMODE4_READ ? "READ"
                             : iomode == LAYOUTIOMODE4_RW ? "RW"
                                                          : std::to_string(iomode);
    std::string out = "layout stateid " + format_stateid(stateid) + " iomode " + mode + " range " +
                      std::to_string(offset) + "+" +
                      (length == NFS4_UINT64_MAX ? "all" : std::to_string(length)) +
                      (return_on_close ? " return-on-close" : "") + "\n";
    out += "  stripe_unit " + std::to_string(stripe_unit) + " flags 0x" +
           [&] {
               char b[16];
               std::snprintf(b, sizeof(b), "%x", flags);
               return std::string(b);
           }() +
           " stats_collect_hint " + std::to_string(stats_collect_hint) + "\n";
    for (std::size_t m = 0; m < mirrors.size(); ++m) {
        for (std::size_t d = 0; d < mirrors[m].data_servers.size(); ++d) {
            const FlexDataServer& ds = mirrors[m].data_servers[d];
            out += "  mirror " + std::to_string(m) + " ds " + std::to_string(d) + ": device " +
                   format_deviceid(ds.deviceid) + " stateid " + format_stateid(ds.stateid) +
                   " user " + ds.user + " group " + ds.group + " efficiency " +
                   std::to_string(ds.efficiency) + "\n";
            for (const FileHandle& fh : ds.fh_versions) {
                out += "    fh " + fh.hex() + "\n";
            }
        }
    }
    return out;
}

FlexLayout decode_ff_layout4(std::span<const char> body) {
    XdrDecoder d(body);
    ff_layout4 wire;
    if (!ff_xdr_decode_ff_layout4(d.xdr(), &wire)) {
        throw XdrError("ff_layout4 does not decode (" + std::to_string(body.size()) + " bytes)");
    }
    FlexLayout out;
    std::string error;
    try {
        out.stripe_unit = wire.ffl_stripe_unit;
        out.flags = enum_bits(wire.ffl_flags);
        out.stats_collect_hint = wire.ffl_stats_collect_hint;
        // Ganesha 4.3's stock xdr_ff_layout4 ends before ffl_stats_collect_hint: read it.
        if (d.remaining() == 4) {
            d.u32(out.stats_collect_hint);
        }
        if (d.remaining() != 0) {
            error = "ff_layout4: " + std::to_string(d.remaining()) + " bytes follow the layout";
        }
        for (u_int m = 0; m < wire.ffl_mirrors.ffl_mirrors_len && error.empty(); ++m) {
            const ff_mirror4& wm = wire.ffl_mirrors.ffl_mirrors_val[m];
            FlexMirror mirror;
            for (u_int i = 0; i < wm.ffm_data_servers.ffm_data_servers_len; ++i) {
                const ff_data_server4& w = wm.ffm_data_servers.ffm_data_servers_val[i];
                FlexDataServer ds;
                std::memcpy(ds.deviceid.data(), w.ffds_deviceid, NFS4_DEVICEID4_SIZE);
                ds.efficiency = w.ffds_efficiency;
                ds.stateid = w.ffds_stateid;
                for (u_int f = 0; f < w.ffds_fh_vers.ffds_fh_vers_len; ++f) {
                    const nfs_fh4& fh = w.ffds_fh_vers.ffds_fh_vers_val[f];
                    ds.fh_versions.push_back(FileHandle{
                        std::vector<char>(fh.nfs_fh4_val, fh.nfs_fh4_val + fh.nfs_fh4_len)});
                }
                ds.user.assign(w.ffds_user.utf8string_val, w.ffds_user.utf8string_len);
                ds.group.assign(w.ffds_group.utf8string_val, w.ffds_group.utf8string_len);
                mirror.data_servers.push_back(std::move(ds));
            }
            out.mirrors.push_back(std::move(mirror));
        }
    } catch (...) {
        ff_xdr_free_ff_layout4(&wire);
        throw;
    }
    ff_xdr_free_ff_layout4(&wire);
    if (!error.empty()) {
        throw XdrError(error);
    }
    return out;
}

FlexLayout decode_layoutget(const LAYOUTGET4resok& ok) {
    for (u_int i = 0; i < ok.logr_layout.logr_layout_len; ++i) {
        const layout4& seg = ok.logr_layout.logr_layout_val[i];
        if (enum_bits(seg.lo_content.loc_type) != LAYOUT4_FLEX_FILES) {
            continue;
        }
        FlexLayout out = decode_ff_layout4(std::span<const char>(
            seg.lo_content.loc_body.loc_body_val, seg.lo_content.loc_body.loc_body_len));
        out.stateid = ok.logr_stateid;
        out.return_on_close = ok.logr_return_on_close;
        out.offset = seg.lo_offset;
        out.length = seg.lo_length;
        out.iomode = enum_bits(seg.lo_iomode);
        return out;
    }
    throw XdrError("LAYOUTGET returned " + std::to_string(ok.logr_layout.logr_layout_len) +
                   " segments, none of type LAYOUT4_FLEX_FILES");
}

// ---- Universal addresses and ff_device_addr4 ------------------------------------------

std::optional<UniversalAddress> parse_universal_address(std::string_view netid,
                                                        std::string_view uaddr) {
    const bool v4 = netid == "tcp" || netid == "udp";
    const bool v6 = netid == "tcp6" || netid == "udp6";
    if (!v4 && !v6) {
        return std::nullopt;
    }
    // The last two dot-separated fields are the port's high and low bytes.
    const auto lo_dot = uaddr.rfind('.');
    if (lo_dot == std::string_view::npos || lo_dot == 0) {
        return std::nullopt;
    }
    const auto hi_dot = uaddr.rfind('.', lo_dot - 1);
    if (hi_dot == std::string_view::npos || hi_dot == 0) {
        return std::nullopt;
    }
    auto byte = [](std::string_view s) -> std::optional<uint32_t> {
        uint32_t v = 0;
        if (s.empty() || s.size() > 3) {
            return std::nullopt;
        }
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec != std::errc() || end != s.data() + s.size() || v > 255) {
            return std::nullopt;
        }
        return v;
    };
    const auto hi = byte(uaddr.substr(hi_dot + 1, lo_dot - hi_dot - 1));
    const auto lo = byte(uaddr.substr(lo_dot + 1));
    if (!hi || !lo) {
        return std::nullopt;
    }
    std::string host(uaddr.substr(0, hi_dot));
    unsigned char buf[sizeof(in6_addr)];
    if (inet_pton(v4 ? AF_INET : AF_INET6, host.c_str(), buf) != 1) {
        return std::nullopt;
    }
    return UniversalAddress{std::move(host), static_cast<uint16_t>(*hi << 8 | *lo)};
}

std::string format_universal_address(const std::string& host, uint16_t port) {
    return host + "." + std::to_string(port >> 8) + "." + std::to_string(port & 0xff);
}

const FlexDeviceVersion* FlexDeviceAddr::nfs3() const {
    for (const FlexDeviceVersion& v : versions) {
        if (v.version == 3) {
            return &v;
        }
    }
    return nullptr;
}

UniversalAddress FlexDeviceAddr::tcp_address() const {
    for (const FlexNetAddr& n : netaddrs) {
        if ((n.netid == "tcp" || n.netid == "tcp6") && n.address) {
            return *n.address;
        }
    }
    std::string seen;
    for (const FlexNetAddr& n : netaddrs) {
        seen += (seen.empty() ? "" : ", ") + n.netid + " " + n.uaddr;
    }
    throw std::runtime_error("device has no usable TCP address (" +
                             (seen.empty() ? std::string("none given") : seen) + ")");
}

std::string FlexDeviceAddr::describe() const {
    std::string out;
    for (const FlexNetAddr& n : netaddrs) {
        out += "  netaddr " + n.netid + " " + n.uaddr;
        if (n.address) {
            out += " (" + n.address->host + " port " + std::to_string(n.address->port) + ")";
        }
        out += "\n";
    }
    for (const FlexDeviceVersion& v : versions) {
        out += "  version " + std::to_string(v.version) + "." + std::to_string(v.minor_version) +
               " rsize " + std::to_string(v.rsize) + " wsize " + std::to_string(v.wsize) +
               (v.tightly_coupled ? " tightly-coupled" : " loosely-coupled") + "\n";
    }
    return out;
}

FlexDeviceAddr decode_ff_device_addr4(std::span<const char> body) {
    XdrDecoder d(body);
    ff_device_addr4 wire;
    if (!ff_xdr_decode_ff_device_addr4(d.xdr(), &wire)) {
        throw XdrError("ff_device_addr4 does not decode (" + std::to_string(body.size()) +
                       " bytes)");
    }
    FlexDeviceAddr out;
    const std::size_t left = d.remaining();
    for (u_int i = 0; i < wire.ffda_netaddrs.multipath_list4_len; ++i) {
        const netaddr4& n = wire.ffda_netaddrs.multipath_list4_val[i];
        FlexNetAddr a;
        a.netid = n.r_netid ? n.r_netid : "";
        a.uaddr = n.r_addr ? n.r_addr : "";
        a.address = parse_universal_address(a.netid, a.uaddr);
        out.netaddrs.push_back(std::move(a));
    }
    for (u_int i = 0; i < wire.ffda_versions.ffda_versions_len; ++i) {
        const ff_device_versions4& v = wire.ffda_versions.ffda_versions_val[i];
        out.versions.push_back(FlexDeviceVersion{v.ffdv_version, v.ffdv_minorversion, v.ffdv_rsize,
                                                 v.ffdv_wsize, v.ffdv_tightly_coupled != 0});
    }
    ff_xdr_free_ff_device_addr4(&wire);
    if (left != 0) {
        throw XdrError("ff_device_addr4: " + std::to_string(left) + " bytes follow the address");
    }
    return out;
}

FlexDeviceAddr decode_getdeviceinfo(const GETDEVICEINFO4resok& ok) {
    const device_addr4& da = ok.gdir_device_addr;
    if (enum_bits(da.da_layout_type) != LAYOUT4_FLEX_FILES) {
        throw XdrError("GETDEVICEINFO returned a device of layout type " +
                       std::to_string(enum_bits(da.da_layout_type)));
    }
    FlexDeviceAddr addr = decode_ff_device_addr4(
        std::span<const char>(da.da_addr_body.da_addr_body_val, da.da_addr_body.da_addr_body_len));
    if (ok.gdir_notification.bitmap4_len > 0) {
        addr.notifications = ok.gdir_notification.map[0];
    }
    return addr;
}

// ---- ff_layoutreturn4 and LAYOUTERROR4args --------------------------------------------

namespace {

bool put_stateid(XDR* x, const stateid4& s) {
    return xdr_put_u32(x, s.seqid) &&
           xdr_put_raw(x, std::span<const char>(s.other, sizeof(s.other)));
}

bool put_time(XDR* x, const NfsTime& t) {
    return xdr_put_u64(x, static_cast<uint64_t>(t.seconds)) && xdr_put_u32(x, t.nseconds);
}

bool put_device_error(XDR* x, const DeviceError& e) {
    return xdr_put_raw(x, e.deviceid) && xdr_put_u32(x, e.status) && xdr_put_u32(x, e.opnum);
}

bool put_latency(XDR* x, const FlexIoLatency& l) {
    return xdr_put_u64(x, l.ops_requested) && xdr_put_u64(x, l.bytes_requested) &&
           xdr_put_u64(x, l.ops_completed) && xdr_put_u64(x, l.bytes_completed) &&
           xdr_put_u64(x, l.bytes_not_delivered) && put_time(x, l.total_busy_time) &&
           put_time(x, l.aggregate_completion_time);
}

bool put_io_info(XDR* x, uint64_t count, uint64_t bytes, IoInfoCount width) {
    if (width == IoInfoCount::ganesha43_u32) {
        if (count > UINT32_MAX) {
            return false;
        }
        return xdr_put_u32(x, static_cast<uint32_t>(count)) && xdr_put_u64(x, bytes);
    }
    return xdr_put_u64(x, count) && xdr_put_u64(x, bytes);
}

bool put_string(XDR* x, const std::string& s) {
    return xdr_put_opaque(x, std::span<const char>(s.data(), s.size()));
}

// ff_layoutupdate4 (RFC 8435 section 9.2.1): in ff_iostats4 and as LAYOUTSTATS's body.
bool put_ff_layoutupdate(XDR* x, const FlexIoStats& s) {
    return put_string(x, s.netid) && put_string(x, s.uaddr) && xdr_put_opaque(x, s.fh.bytes) &&
           put_latency(x, s.read) && put_latency(x, s.write) && put_time(x, s.duration) &&
           xdr_put_u32(x, s.local ? 1 : 0);
}

} // namespace

std::vector<char> encode_ff_layoutreturn4(const FlexLayoutReturn& body, IoInfoCount counts) {
    std::size_t hint = 64;
    for (const FlexIoError& e : body.ioerr_report) {
        hint += 64 + 24 * e.errors.size();
    }
    for (const FlexIoStats& s : body.iostats_report) {
        hint += 320 + s.netid.size() + s.uaddr.size() + s.fh.bytes.size();
    }
    return xdr_encode(hint, "ff_layoutreturn4", [&](XDR* x) {
        if (!xdr_put_u32(x, static_cast<uint32_t>(body.ioerr_report.size()))) {
            return false;
        }
        for (const FlexIoError& e : body.ioerr_report) {
            if (!xdr_put_u64(x, e.offset) || !xdr_put_u64(x, e.length) ||
                !put_stateid(x, e.stateid) ||
                !xdr_put_u32(x, static_cast<uint32_t>(e.errors.size()))) {
                return false;
            }
            for (const DeviceError& de : e.errors) {
                if (!put_device_error(x, de)) {
                    return false;
                }
            }
        }
        if (!xdr_put_u32(x, static_cast<uint32_t>(body.iostats_report.size()))) {
            return false;
        }
        for (const FlexIoStats& s : body.iostats_report) {
            if (s.fh.bytes.size() > NFS4_FHSIZE) {
                return false;
            }
            if (!xdr_put_u64(x, s.offset) || !xdr_put_u64(x, s.length) ||
                !put_stateid(x, s.stateid) || !put_io_info(x, s.read_count, s.read_bytes, counts) ||
                !put_io_info(x, s.write_count, s.write_bytes, counts) ||
                !xdr_put_raw(x, s.deviceid) || !put_ff_layoutupdate(x, s)) {
                return false;
            }
        }
        return true;
    });
}

std::vector<char> encode_layoutstats_args(const FlexIoStats& s) {
    if (s.fh.bytes.size() > NFS4_FHSIZE) {
        throw XdrError("LAYOUTSTATS4args: a data-server filehandle longer than NFS4_FHSIZE");
    }
    const std::vector<char> update =
        xdr_encode(256 + s.netid.size() + s.uaddr.size() + s.fh.bytes.size(), "ff_layoutupdate4",
                   [&](XDR* x) { return put_ff_layoutupdate(x, s); });
    return xdr_encode(128 + update.size(), "LAYOUTSTATS4args", [&](XDR* x) {
        return xdr_put_u64(x, s.offset) && xdr_put_u64(x, s.length) && put_stateid(x, s.stateid) &&
               put_io_info(x, s.read_count, s.read_bytes, IoInfoCount::rfc7862_u64) &&
               put_io_info(x, s.write_count, s.write_bytes, IoInfoCount::rfc7862_u64) &&
               xdr_put_raw(x, s.deviceid) &&
               // lsa_layoutupdate: layouttype4, then the flex-files body as opaque
               xdr_put_u32(x, LAYOUT4_FLEX_FILES) && xdr_put_opaque(x, update);
    });
}

std::vector<char> encode_layouterror_args(uint64_t offset, uint64_t length, const stateid4& stateid,
                                          const std::vector<DeviceError>& errors) {
    return xdr_encode(64 + 24 * errors.size(), "LAYOUTERROR4args", [&](XDR* x) {
        if (!xdr_put_u64(x, offset) || !xdr_put_u64(x, length) || !put_stateid(x, stateid) ||
            !xdr_put_u32(x, static_cast<uint32_t>(errors.size()))) {
            return false;
        }
        for (const DeviceError& e : errors) {
            if (!put_device_error(x, e)) {
                return false;
            }
        }
        return true;
    });
}

// ---- Table 1 ----------------------------------------------------------------------

Fattr table1_attrs(const nfs3::Fattr& a) {
    Fattr f;
    f.size = a.size;
    f.space_used = a.used;
    f.mode = a.mode & 07777; // mode4 has no file-type bits
    f.owner = std::to_string(a.uid);
    f.owner_group = std::to_string(a.gid);
    f.time_access = NfsTime{a.atime.seconds, a.atime.nseconds};
    f.time_modify = NfsTime{a.mtime.seconds, a.mtime.nseconds};
    f.time_metadata = NfsTime{a.ctime.seconds, a.ctime.nseconds};
    return f;
}

} // namespace flexfiles::client
