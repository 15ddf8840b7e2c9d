// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The flexible-file layout's XDR bodies (RFC 8435) as C++ values, and their encoding and
// decoding through Ganesha's own routines in nfsv41.h (one XDR path: these functions only
// build and read the C structs xdr_ff_layout4 and friends work on).
//
//   ff_layout4        LAYOUTGET's loc_body              (RFC 8435 section 5.1)
//   ff_device_addr4   GETDEVICEINFO's da_addr_body      (section 4.1)
//   ff_layoutreturn4  LAYOUTRETURN's lrf_body           (section 9)
//
// and RFC 5665 universal addresses ("127.0.0.2.8.1" = 127.0.0.2 port 2049).
//
// Nothing here knows about exports, handles or op_ctx: unit tests use it alone.
#pragma once

extern "C" {
#include "config.h" // Ganesha's build configuration first, as in Ganesha
#include "nfsv41.h"
}

#include "model/data_files.hpp"
#include "model/deviceid.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace flexfiles::layout {

// ---------------------------------------------------------------------------
// Universal addresses (RFC 5665 section 5.2.3)

struct NetAddr {
    std::string netid; // "tcp" or "tcp6"
    std::string uaddr; // "a.b.c.d.p1.p2" or "x:...:y.p1.p2"
    bool operator==(const NetAddr&) const = default;
};

// For a numeric IPv4 or IPv6 address (IPv6 with or without brackets; written in its
// canonical RFC 5952 form); std::nullopt for anything else (host names included: a device
// address must not depend on name resolution at the client).
std::optional<NetAddr> universal_address(std::string_view ip, std::uint16_t port);

struct HostPort {
    std::string ip;
    std::uint16_t port = 0;
    bool operator==(const HostPort&) const = default;
};

// The inverse; std::nullopt when the netid and address do not match or are malformed.
std::optional<HostPort> parse_universal_address(std::string_view netid, std::string_view uaddr);

// ---------------------------------------------------------------------------
// ff_device_addr4

struct DeviceVersion {
    std::uint32_t version = 3;
    std::uint32_t minor_version = 0;
    std::uint32_t rsize = 0;
    std::uint32_t wsize = 0;
    bool tightly_coupled = false;
    bool operator==(const DeviceVersion&) const = default;
};

struct DeviceAddr {
    std::vector<NetAddr> addrs;          // ffda_netaddrs (multipath list)
    std::vector<DeviceVersion> versions; // ffda_versions
    bool operator==(const DeviceAddr&) const = default;
};

// Encodes into `xdrs`; false when it does not fit.
bool encode_device_addr(XDR* xdrs, const DeviceAddr& dev);
// Decodes a whole da_addr_body; std::nullopt on bad XDR or trailing bytes.
std::optional<DeviceAddr> decode_device_addr(const void* body, std::size_t len);

// ---------------------------------------------------------------------------
// ff_layout4

struct LayoutDataServer {
    fleet::DeviceId deviceid{};
    std::uint32_t efficiency = 0;
    stateid4 stateid{}; // anonymous (all zero) for NFSv3 data servers
    std::vector<std::vector<std::uint8_t>> fh_vers;
    std::string user;  // ffds_user: a numeric uid as a string ("40001")
    std::string group; // ffds_group
};

struct LayoutMirror {
    std::vector<LayoutDataServer> data_servers;
};

struct Layout {
    std::uint64_t stripe_unit = 0;
    std::vector<LayoutMirror> mirrors;
    std::uint32_t flags = 0; // ff_flags4
    std::uint32_t stats_collect_hint = 0;
};

// The layout of a file: one mirror per data file, in mirror order, each with its one data
// server (stripe width 1), the anonymous stateid, the data file's NFSv3 filehandle and its
// fencing uid/gid as numeric owner strings. efficiency[i], when given, is mirror i's
// ffds_efficiency (default 0).
Layout layout_of(const mds::DataFileMap& map, const std::vector<std::uint32_t>& efficiency = {},
                 std::uint32_t flags = 0, std::uint32_t stats_collect_hint = 0);

// Encodes into `xdrs`; false when it does not fit (or a field exceeds XDR limits).
bool encode_layout(XDR* xdrs, const Layout& layout);
// Decodes a whole loc_body; std::nullopt on bad XDR or trailing bytes.
std::optional<Layout> decode_layout(const void* body, std::size_t len);

// Numeric owner string -> id (ffds_user, LAYOUT_WCC owner attributes); std::nullopt for
// anything but 1 to 10 decimal digits that fit 32 bits.
std::optional<std::uint32_t> parse_numeric_owner(std::string_view owner);

// ---------------------------------------------------------------------------
// ff_layoutreturn4

struct IoError {
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
    stateid4 stateid{};
    fleet::DeviceId deviceid{};
    std::uint32_t status = NFS4_OK;        // nfsstat4 as sent (any value)
    std::uint32_t opnum = NFS4_OP_ILLEGAL; // nfs_opnum4 as sent
};

struct IoStats {
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
    stateid4 stateid{};
    fleet::DeviceId deviceid{};
    std::uint64_t read_ops = 0; // io_info4 ii_count: 64 bits (RFC 7862, patch 0008)
    std::uint64_t read_bytes = 0;
    std::uint64_t write_ops = 0;
    std::uint64_t write_bytes = 0;
};

struct ReturnReport {
    std::vector<IoError> errors; // every device_error4 of every ff_ioerr4, flattened
    std::vector<IoStats> stats;
};

// Decodes one ff_layoutreturn4 from the stream; std::nullopt on bad XDR (nothing leaks).
std::optional<ReturnReport> decode_layoutreturn(XDR* xdrs);
// Encodes one ff_layoutreturn4, one ff_ioerr4 per error (for clients and tests).
bool encode_layoutreturn(XDR* xdrs, const ReturnReport& report);

} // namespace flexfiles::layout
