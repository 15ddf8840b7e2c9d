// SPDX-License-Identifier: LGPL-3.0-or-later
//
// A small synchronous NFSv3 client for tests, on libnfs's raw RPC layer: every call returns
// the reply as the server sent it, post-op and pre-op attributes included (libnfs's
// high-level API hides the WRITE reply's wcc_data). libnfs's headers stay out of this one.
//
// Errors: an NFS status is data (each result has `status`); a transport failure (no
// connection, timeout, garbage) throws Nfs3TransportError.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace flexfiles::harness {

// nfsstat3 (RFC 1813 section 2.6).
enum class Nfs3Status : std::uint32_t {
    Ok = 0,
    Perm = 1,
    NoEnt = 2,
    Io = 5,
    NxIo = 6,
    Acces = 13,
    Exist = 17,
    XDev = 18,
    NoDev = 19,
    NotDir = 20,
    IsDir = 21,
    Inval = 22,
    FBig = 27,
    NoSpc = 28,
    RoFs = 30,
    MLink = 31,
    NameTooLong = 63,
    NotEmpty = 66,
    DQuot = 69,
    Stale = 70,
    Remote = 71,
    BadHandle = 10001,
    NotSync = 10002,
    BadCookie = 10003,
    NotSupp = 10004,
    TooSmall = 10005,
    ServerFault = 10006,
    BadType = 10007,
    Jukebox = 10008,
};
std::string to_string(Nfs3Status status);
std::ostream& operator<<(std::ostream& os, Nfs3Status status);

struct Nfs3Time {
    std::uint32_t seconds = 0;
    std::uint32_t nseconds = 0;
    friend bool operator==(const Nfs3Time&, const Nfs3Time&) = default;
    friend auto operator<=>(const Nfs3Time&, const Nfs3Time&) = default;
};

enum class Nfs3Type : std::uint32_t {
    Reg = 1,
    Dir = 2,
    Blk = 3,
    Chr = 4,
    Lnk = 5,
    Sock = 6,
    Fifo = 7
};

// fattr3.
struct Nfs3Attr {
    Nfs3Type type = Nfs3Type::Reg;
    std::uint32_t mode = 0; // permission bits as sent (no file-type bits)
    std::uint32_t nlink = 0;
    std::uint32_t uid = 0;
    std::uint32_t gid = 0;
    std::uint64_t size = 0;
    std::uint64_t used = 0;
    std::uint64_t fsid = 0;
    std::uint64_t fileid = 0;
    Nfs3Time atime, mtime, ctime;
    friend bool operator==(const Nfs3Attr&, const Nfs3Attr&) = default;
};
std::ostream& operator<<(std::ostream& os, const Nfs3Attr& a);

// wcc_attr (pre-operation attributes).
struct Nfs3WccAttr {
    std::uint64_t size = 0;
    Nfs3Time mtime, ctime;
};

struct Nfs3Wcc {
    std::optional<Nfs3WccAttr> before;
    std::optional<Nfs3Attr> after;
};

struct Nfs3Fh {
    std::vector<std::uint8_t> bytes;
    bool empty() const { return bytes.empty(); }
    friend bool operator==(const Nfs3Fh&, const Nfs3Fh&) = default;
};

enum class Nfs3Stable : std::uint32_t { Unstable = 0, DataSync = 1, FileSync = 2 };

struct Nfs3GetattrResult {
    Nfs3Status status = Nfs3Status::ServerFault;
    Nfs3Attr attr; // valid when status == Ok
};

struct Nfs3LookupResult {
    Nfs3Status status = Nfs3Status::ServerFault;
    Nfs3Fh fh;
    std::optional<Nfs3Attr> attr;
    std::optional<Nfs3Attr> dir_attr;
};

struct Nfs3CreateResult {
    Nfs3Status status = Nfs3Status::ServerFault;
    std::optional<Nfs3Fh> fh; // the server may omit it
    std::optional<Nfs3Attr> attr;
    Nfs3Wcc dir_wcc;
};

struct Nfs3WriteResult {
    Nfs3Status status = Nfs3Status::ServerFault;
    Nfs3Wcc file_wcc; // present on success and on failure
    std::uint32_t count = 0;
    Nfs3Stable committed = Nfs3Stable::Unstable;
    std::array<std::uint8_t, 8> verf{};
};

struct Nfs3ReadResult {
    Nfs3Status status = Nfs3Status::ServerFault;
    std::optional<Nfs3Attr> attr;
    std::vector<std::uint8_t> data;
    bool eof = false;
};

struct Nfs3CommitResult {
    Nfs3Status status = Nfs3Status::ServerFault;
    Nfs3Wcc file_wcc;
    std::array<std::uint8_t, 8> verf{};
};

struct Nfs3SetattrResult {
    Nfs3Status status = Nfs3Status::ServerFault;
    Nfs3Wcc obj_wcc;
};

struct Nfs3RemoveResult {
    Nfs3Status status = Nfs3Status::ServerFault;
    Nfs3Wcc dir_wcc;
};

// What SETATTR changes; unset fields stay as they are.
struct Nfs3SetAttrs {
    std::optional<std::uint32_t> mode;
    std::optional<std::uint32_t> uid;
    std::optional<std::uint32_t> gid;
    std::optional<std::uint64_t> size;
};

struct Nfs3Credentials {
    std::uint32_t uid = 0;
    std::uint32_t gid = 0;
};

class Nfs3TransportError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class Nfs3Client {
public:
    // url: nfs://ADDR/PATH?nfsport=N&mountport=M. Both ports are required: the servers
    // share one rpcbind and overwrite each other's registrations, so no portmapper lookup.
    // MOUNTs PATH (an export's Path) over TCP, then connects to NFS. Throws
    // Nfs3TransportError (connection or MOUNT failure) or std::invalid_argument (bad URL).
    explicit Nfs3Client(const std::string& url, Nfs3Credentials creds = {},
                        std::chrono::milliseconds timeout = std::chrono::seconds(10));
    ~Nfs3Client();
    Nfs3Client(const Nfs3Client&) = delete;
    Nfs3Client& operator=(const Nfs3Client&) = delete;

    const Nfs3Fh& root() const;
    const std::string& server() const;
    // AUTH_SYS identity for the following calls.
    void set_credentials(Nfs3Credentials creds);
    // Drops the connection and mounts again (after a server restart).
    void reconnect();

    Nfs3GetattrResult getattr(const Nfs3Fh& fh);
    Nfs3LookupResult lookup(const Nfs3Fh& dir, const std::string& name);
    // UNCHECKED create with the given mode (GUARDED if `guarded`).
    Nfs3CreateResult create(const Nfs3Fh& dir, const std::string& name, std::uint32_t mode = 0644,
                            bool guarded = false);
    Nfs3WriteResult write(const Nfs3Fh& fh, std::uint64_t offset,
                          const std::vector<std::uint8_t>& data,
                          Nfs3Stable stable = Nfs3Stable::FileSync);
    Nfs3ReadResult read(const Nfs3Fh& fh, std::uint64_t offset, std::uint32_t count);
    Nfs3CommitResult commit(const Nfs3Fh& fh, std::uint64_t offset = 0, std::uint32_t count = 0);
    Nfs3SetattrResult setattr(const Nfs3Fh& fh, const Nfs3SetAttrs& attrs);
    Nfs3RemoveResult remove(const Nfs3Fh& dir, const std::string& name);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace flexfiles::harness
