// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The NFSv3 vocabulary (RFC 1813) the product, the test harness and the tools share: the
// nfsstat3 statuses and their names, filehandles, the values of fattr3, wcc_attr and
// wcc_data, stable_how, write verifiers, what a SETATTR sets, and the RPC program numbers of
// NFS and MOUNT v3.
//
// Values only: the XDR structs stay with their implementations, each converting once
// (libnfs's in fleet/libnfs_nfs3.hpp for the fleet and the harness, rpcgen's in
// tools/client/nfs3.cpp). Fields keep what the server sent (mode with whatever bits it set,
// an unknown status or file type as its number): a user that wants less masks it.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace flexfiles::nfs3 {

// RPC program numbers (RFC 1813 section 1 and Appendix I).
inline constexpr std::uint32_t kNfsProgram = 100003;
inline constexpr std::uint32_t kNfsVersion = 3;
inline constexpr std::uint32_t kMountProgram = 100005;
inline constexpr std::uint32_t kMountVersion = 3;

// nfs_fh3 (RFC 1813 section 2.5): at most FHSIZE3 = 64 opaque bytes, held inline. A data
// file's handle lives in its DataFile (data_files.hpp) and travels in layouts and in the
// fleet's calls without a heap buffer of its own: LAYOUT_WCC compares every reported handle
// with the file's and the layout's on each call, and a buffer per handle cost a cache miss
// for each.
class Fh {
public:
    static constexpr std::size_t kMaxSize = 64;

    Fh() = default;
    // Throws std::length_error above kMaxSize: no NFSv3 server hands out such a handle, so
    // one in the store or a layout is corrupt.
    Fh(const std::uint8_t* bytes, std::size_t size) { assign(bytes, size); }
    Fh(const std::vector<std::uint8_t>& v) : Fh(v.data(), v.size()) {}
    Fh(std::initializer_list<std::uint8_t> l) : Fh(l.begin(), l.size()) {}
    // A handle off the wire: std::nullopt when `size` is 0 or above kMaxSize.
    static std::optional<Fh> from_bytes(const void* bytes, std::size_t size);

    void assign(const std::uint8_t* bytes, std::size_t size) {
        if (size > kMaxSize)
            throw std::length_error("an NFSv3 filehandle of " + std::to_string(size) +
                                    " bytes (NFSv3 allows at most 64)");
        std::copy_n(bytes, size, bytes_.begin());
        std::fill(bytes_.begin() + static_cast<std::ptrdiff_t>(size), bytes_.end(), 0);
        size_ = static_cast<std::uint8_t>(size);
    }
    void clear() { assign(nullptr, 0); }

    const std::uint8_t* data() const { return bytes_.data(); }
    std::size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    const std::uint8_t* begin() const { return data(); }
    const std::uint8_t* end() const { return data() + size_; }
    std::vector<std::uint8_t> to_vector() const { return {begin(), end()}; }
    std::string hex() const; // lower-case, two digits a byte

    // The unused bytes are zero, so equal handles compare equal byte for byte.
    bool operator==(const Fh&) const = default;

private:
    std::uint8_t size_ = 0;
    std::array<std::uint8_t, kMaxSize> bytes_{};
};

// nfsstat3 (RFC 1813 section 2.6). The underlying type is fixed, so any 32-bit value off
// the wire can be held: an unknown status is kept as it is.
enum class Status : std::uint32_t {
    ok = 0,
    perm = 1,
    noent = 2,
    io = 5,
    nxio = 6,
    acces = 13,
    exist = 17,
    xdev = 18,
    nodev = 19,
    notdir = 20,
    isdir = 21,
    inval = 22,
    fbig = 27,
    nospc = 28,
    rofs = 30,
    mlink = 31,
    nametoolong = 63,
    notempty = 66,
    dquot = 69,
    stale = 70,
    remote = 71,
    badhandle = 10001,
    not_sync = 10002,
    bad_cookie = 10003,
    notsupp = 10004,
    toosmall = 10005,
    serverfault = 10006,
    badtype = 10007,
    jukebox = 10008,
};
// "NFS3_OK", "NFS3ERR_ACCES", ... ("NFS3ERR_12345" for an unknown value).
std::string status_name(Status s);
// The name, so that test frameworks print statuses readably.
std::ostream& operator<<(std::ostream& os, Status s);

// stable_how (RFC 1813 section 3.3.7).
enum class StableHow : std::uint32_t { unstable = 0, data_sync = 1, file_sync = 2 };
// "UNSTABLE", "DATA_SYNC", "FILE_SYNC" ("STABLE_?" for an unknown value).
const char* stable_name(StableHow s);

// ftype3 (RFC 1813 section 2.6); an unknown type off the wire is kept as its number.
enum class Ftype : std::uint32_t {
    reg = 1,
    dir = 2,
    blk = 3,
    chr = 4,
    lnk = 5,
    sock = 6,
    fifo = 7,
};

// nfstime3.
struct Time {
    std::uint32_t seconds = 0;
    std::uint32_t nseconds = 0;
    friend bool operator==(const Time&, const Time&) = default;
    friend auto operator<=>(const Time&, const Time&) = default;
};

// fattr3. size, used, mode, uid, gid and the three times are what LAYOUT_WCC carries (RFC
// 9766 Table 1); the rest is for diagnostics.
struct Fattr {
    Ftype type = Ftype::reg;
    std::uint32_t mode = 0; // as sent: permission bits, and whatever else the server set
    std::uint32_t nlink = 0;
    std::uint32_t uid = 0;
    std::uint32_t gid = 0;
    std::uint64_t size = 0;
    std::uint64_t used = 0;
    std::uint32_t rdev_major = 0; // specdata3
    std::uint32_t rdev_minor = 0;
    std::uint64_t fsid = 0;
    std::uint64_t fileid = 0;
    Time atime, mtime, ctime;
    friend bool operator==(const Fattr&, const Fattr&) = default;
};
// "size=.. used=.. mode=0644 uid=.. gid=.. nlink=.. fileid=.. atime=s.ns mtime=.. ctime=..".
std::string format_fattr(const Fattr& a);
// "{" format_fattr "}", so that test frameworks print attributes readably.
std::ostream& operator<<(std::ostream& os, const Fattr& a);

// wcc_attr: pre-operation attributes.
struct WccAttr {
    std::uint64_t size = 0;
    Time mtime, ctime;
    friend bool operator==(const WccAttr&, const WccAttr&) = default;
};

// wcc_data: both halves are optional on the wire (pre_op_attr, post_op_attr).
struct Wcc {
    std::optional<WccAttr> before;
    std::optional<Fattr> after;
    friend bool operator==(const Wcc&, const Wcc&) = default;
};

// writeverf3: changes when the server restarts and may have lost unstable writes.
using WriteVerf = std::array<std::uint8_t, 8>;

// What a SETATTR (or the sattr3 of a CREATE) sets; unset members are left alone. The
// times are set to these values (SET_TO_CLIENT_TIME).
struct SetAttrs {
    std::optional<std::uint32_t> mode;
    std::optional<std::uint32_t> uid;
    std::optional<std::uint32_t> gid;
    std::optional<std::uint64_t> size;
    std::optional<Time> atime;
    std::optional<Time> mtime;
    bool empty() const { return !mode && !uid && !gid && !size && !atime && !mtime; }
    friend bool operator==(const SetAttrs&, const SetAttrs&) = default;
};

} // namespace flexfiles::nfs3
