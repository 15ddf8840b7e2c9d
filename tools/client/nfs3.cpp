// SPDX-License-Identifier: LGPL-3.0-or-later
#include "nfs3.hpp"

#include "xdr_stream.hpp"

// Generated in the build tree by rpcgen from Ganesha's nfs23.x and mount.x (tools/CMakeLists.txt).
#include "nfs3_prot.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <rpc/xdr_inline.h>
#include <utility>

namespace flexfiles::client::nfs3 {

// nfs3.hpp's and model/nfs3.hpp's numbers are the protocol's as Ganesha's .x files have them
// (the generated header is kept out of nfs3.hpp: its names, e.g. MOUNT's `name` and
// `groups`, would land in every includer's global scope).
static_assert(kProgram == NFS_PROGRAM && kVersion == NFS_V3);
static_assert(kProcNull == NFSPROC3_NULL && kProcGetattr == NFSPROC3_GETATTR &&
              kProcRead == NFSPROC3_READ && kProcWrite == NFSPROC3_WRITE &&
              kProcCommit == NFSPROC3_COMMIT);
static_assert(kMountProgram == MOUNTPROG && kMountVersion == MOUNT_V3 &&
              kMountProcMnt == MOUNTPROC3_MNT && kMaxPathLen == MNTPATHLEN);
static_assert(static_cast<uint32_t>(Ftype::reg) == NF3REG &&
              static_cast<uint32_t>(Ftype::fifo) == NF3FIFO);
static_assert(static_cast<uint32_t>(Stable::unstable) == UNSTABLE &&
              static_cast<uint32_t>(Stable::data_sync) == DATA_SYNC &&
              static_cast<uint32_t>(Stable::file_sync) == FILE_SYNC);
static_assert(sizeof(Verifier) == sizeof(writeverf3));
// Every nfsstat3 model/nfs3.hpp names.
constexpr std::pair<Status, uint32_t> kStatuses[] = {
    {Status::ok, NFS3_OK},
    {Status::perm, NFS3ERR_PERM},
    {Status::noent, NFS3ERR_NOENT},
    {Status::io, NFS3ERR_IO},
    {Status::nxio, NFS3ERR_NXIO},
    {Status::acces, NFS3ERR_ACCES},
    {Status::exist, NFS3ERR_EXIST},
    {Status::xdev, NFS3ERR_XDEV},
    {Status::nodev, NFS3ERR_NODEV},
    {Status::notdir, NFS3ERR_NOTDIR},
    {Status::isdir, NFS3ERR_ISDIR},
    {Status::inval, NFS3ERR_INVAL},
    {Status::fbig, NFS3ERR_FBIG},
    {Status::nospc, NFS3ERR_NOSPC},
    {Status::rofs, NFS3ERR_ROFS},
    {Status::mlink, NFS3ERR_MLINK},
    {Status::nametoolong, NFS3ERR_NAMETOOLONG},
    {Status::notempty, NFS3ERR_NOTEMPTY},
    {Status::dquot, NFS3ERR_DQUOT},
    {Status::stale, NFS3ERR_STALE},
    {Status::remote, NFS3ERR_REMOTE},
    {Status::badhandle, NFS3ERR_BADHANDLE},
    {Status::not_sync, NFS3ERR_NOT_SYNC},
    {Status::bad_cookie, NFS3ERR_BAD_COOKIE},
    {Status::notsupp, NFS3ERR_NOTSUPP},
    {Status::toosmall, NFS3ERR_TOOSMALL},
    {Status::serverfault, NFS3ERR_SERVERFAULT},
    {Status::badtype, NFS3ERR_BADTYPE},
    {Status::jukebox, NFS3ERR_JUKEBOX},
};
static_assert(std::all_of(std::begin(kStatuses), std::end(kStatuses), [](const auto& s) {
    return static_cast<uint32_t>(s.first) == s.second;
}));

namespace {

// ---- nfs3.hpp's values <-> rpcgen's structs. -----------------------------------------
// For encoding the structs point into the caller's bytes (the routines only read them);
// decoded structs are copied out, then Decoded frees what the routines allocated.

u_int wire_len(std::size_t n) {
    return static_cast<u_int>(std::min<std::size_t>(n, UINT32_MAX)); // too long fails encoding
}

nfstime3 to_wire(const Time& t) {
    return nfstime3{t.seconds, t.nseconds};
}
Time from_wire(const nfstime3& t) {
    return Time{t.seconds, t.nseconds};
}

nfs_fh3 to_wire(const FileHandle& fh) {
    nfs_fh3 w{};
    w.data.data_len = wire_len(fh.bytes.size());
    w.data.data_val = const_cast<char*>(fh.bytes.data());
    return w;
}
FileHandle from_wire(const nfs_fh3& w) {
    return FileHandle{std::vector<char>(w.data.data_val, w.data.data_val + w.data.data_len)};
}

fattr3 to_wire(const Fattr& a) {
    fattr3 w{};
    set_enum_bits(w.type, static_cast<uint32_t>(a.type));
    w.mode = a.mode;
    w.nlink = a.nlink;
    w.uid = a.uid;
    w.gid = a.gid;
    w.size = a.size;
    w.used = a.used;
    w.rdev = specdata3{a.rdev_major, a.rdev_minor};
    w.fsid = a.fsid;
    w.fileid = a.fileid;
    w.atime = to_wire(a.atime);
    w.mtime = to_wire(a.mtime);
    w.ctime = to_wire(a.ctime);
    return w;
}
Fattr from_wire(const fattr3& w) {
    Fattr a;
    a.type = static_cast<Ftype>(enum_bits(w.type));
    a.mode = w.mode;
    a.nlink = w.nlink;
    a.uid = w.uid;
    a.gid = w.gid;
    a.size = w.size;
    a.used = w.used;
    a.rdev_major = w.rdev.specdata1;
    a.rdev_minor = w.rdev.specdata2;
    a.fsid = w.fsid;
    a.fileid = w.fileid;
    a.atime = from_wire(w.atime);
    a.mtime = from_wire(w.mtime);
    a.ctime = from_wire(w.ctime);
    return a;
}

post_op_attr to_wire(const std::optional<Fattr>& a) {
    post_op_attr w{};
    w.attributes_follow = a.has_value();
    if (a) {
        w.post_op_attr_u.attributes = to_wire(*a);
    }
    return w;
}
std::optional<Fattr> from_wire(const post_op_attr& w) {
    if (!w.attributes_follow) {
        return std::nullopt;
    }
    return from_wire(w.post_op_attr_u.attributes);
}

pre_op_attr to_wire(const std::optional<WccAttr>& a) {
    pre_op_attr w{};
    w.attributes_follow = a.has_value();
    if (a) {
        w.pre_op_attr_u.attributes = wcc_attr{a->size, to_wire(a->mtime), to_wire(a->ctime)};
    }
    return w;
}
std::optional<WccAttr> from_wire(const pre_op_attr& w) {
    if (!w.attributes_follow) {
        return std::nullopt;
    }
    const wcc_attr& a = w.pre_op_attr_u.attributes;
    return WccAttr{a.size, from_wire(a.mtime), from_wire(a.ctime)};
}

wcc_data to_wire(const Wcc& w) {
    return wcc_data{to_wire(w.before), to_wire(w.after)};
}
Wcc from_wire(const wcc_data& w) {
    return Wcc{from_wire(w.before), from_wire(w.after)};
}

void to_wire(const Verifier& v, writeverf3& w) {
    std::memcpy(w, v.data(), sizeof(writeverf3));
}
Verifier from_wire(const writeverf3& w) {
    Verifier v;
    std::memcpy(v.data(), w, v.size());
    return v;
}

// mountres3 as rpcgen writes it, but with a bound on auth_flavors: for `int auth_flavors<>`
// rpcgen passes ~0 to xdr_array, which ntirpc refuses to decode with (it rejects any
// maxsize > UINT_MAX / sizeof(int)), so rpcgen's xdr_mountres3 fails on every MNT3_OK reply.
bool xdr_flavor(XDR* x, void* flavor) {
    return xdr_int(x, static_cast<int*>(flavor));
}
bool_t xdr_mountres3_bounded(XDR* x, mountres3* r) {
    if (!xdr_mountstat3(x, &r->fhs_status)) {
        return false;
    }
    if (enum_bits(r->fhs_status) != MNT3_OK) {
        return true;
    }
    mountres3_ok& ok = r->mountres3_u.mountinfo;
    return xdr_fhandle3(x, &ok.fhandle) &&
           xdr_array(x, reinterpret_cast<char**>(&ok.auth_flavors.auth_flavors_val),
                     &ok.auth_flavors.auth_flavors_len, kMaxAuthFlavors, sizeof(int), &xdr_flavor);
}

template <typename Wire> using Codec = bool_t (*)(XDR*, Wire*);

template <typename Wire>
std::vector<char> encode_wire(Wire w, Codec<Wire> codec, std::size_t hint, const char* what) {
    return xdr_encode(hint, what, [&](XDR* x) { return codec(x, &w) != 0; });
}

// A message decoded by its routine; what the routine allocated is freed with it.
template <typename Wire> class Decoded {
public:
    Decoded(Codec<Wire> codec, const char* what) : codec_(codec), what_(what) {
        std::memset(&value, 0, sizeof(value));
    }
    ~Decoded() {
        // xdr_free's own stream: xdr_free would need the routine cast to xdrproc_t.
        codec_(&xdr_free_null_stream, &value);
    }
    Decoded(const Decoded&) = delete;
    Decoded& operator=(const Decoded&) = delete;

    // Decodes all of `bytes`; throws XdrError naming the message.
    void decode(std::span<const char> bytes) {
        XdrDecoder d(bytes);
        const bool ok = codec_(d.xdr(), &value);
        if (lent_) {
            *lent_ = nullptr; // the buffer is not the routine's to free
        }
        if (!ok) {
            throw XdrError(std::string("malformed or truncated ") + what_ + " (" +
                           std::to_string(bytes.size()) + " bytes)");
        }
        if (d.remaining() != 0) {
            throw XdrError(std::string(what_) + ": " + std::to_string(d.remaining()) +
                           " bytes follow the message");
        }
    }

    // READ and WRITE data (`opaque data<>`, unbounded in nfs23.x): ntirpc's xdr_bytes
    // allocates the length the message claims before reading it (a 24-byte READ reply
    // claiming 4 GiB maps 4 GiB), unless it is given a buffer. One as large as the message
    // always suffices, and a longer claim fails in xdrmem before anything is copied. Call
    // before decode(); then take_data() has the bytes.
    void lend_data(char*& val, std::size_t message_size) {
        buffer_.resize(std::max<std::size_t>(message_size, 1));
        val = buffer_.data();
        lent_ = &val;
    }
    std::vector<char> take_data(u_int len) {
        if (len > kMaxData) {
            throw XdrError(std::string(what_) + ": " + std::to_string(len) +
                           " bytes of data exceed the limit");
        }
        buffer_.resize(len);
        return std::move(buffer_);
    }

    Wire value;

private:
    Codec<Wire> codec_;
    const char* what_;
    std::vector<char> buffer_;
    char** lent_ = nullptr;
};

constexpr std::size_t kHeadroom = 256;

std::string fh_prefix(const FileHandle& fh) {
    std::string h = fh.hex();
    return h.size() > 16 ? h.substr(0, 16) + ".." : h;
}

} // namespace

// ---- Statuses. ----------------------------------------------------------------------

uint32_t to_nfs4_status(Status s) {
    switch (s) {
    case Status::ok:
        return NFS4_OK;
    case Status::remote:
        return NFS4ERR_IO; // no NFSv4 equivalent (NFSv4 has no "too many remote levels")
    case Status::badhandle:
        return NFS4ERR_BADHANDLE;
    case Status::not_sync:
        return NFS4ERR_INVAL;
    case Status::bad_cookie:
        return NFS4ERR_BAD_COOKIE;
    case Status::notsupp:
        return NFS4ERR_NOTSUPP;
    case Status::toosmall:
        return NFS4ERR_TOOSMALL;
    case Status::serverfault:
        return NFS4ERR_SERVERFAULT;
    case Status::badtype:
        return NFS4ERR_BADTYPE;
    case Status::jukebox:
        return NFS4ERR_DELAY;
    default:
        // NFSv4 keeps the NFSv3 numbers for the POSIX-like errors (PERM 1 ... STALE 70).
        return static_cast<uint32_t>(s) < 10000 ? static_cast<uint32_t>(s)
                                                : static_cast<uint32_t>(NFS4ERR_IO);
    }
}

std::string CallOutcome::describe() const {
    if (rpc_status != RpcStatus::ok) {
        return std::string("RPC ") + to_string(rpc_status) + (error.empty() ? "" : ": " + error);
    }
    if (!error.empty()) {
        return "bad reply: " + error;
    }
    return status_name(status);
}

// ---- XDR entry points. --------------------------------------------------------------

std::vector<char> encode(const GetattrArgs& a) {
    return encode_wire(GETATTR3args{to_wire(a.fh)}, &xdr_GETATTR3args, kHeadroom, "GETATTR3args");
}
std::vector<char> encode(const ReadArgs& a) {
    return encode_wire(READ3args{to_wire(a.fh), a.offset, a.count}, &xdr_READ3args, kHeadroom,
                       "READ3args");
}
std::vector<char> encode(const WriteArgs& a) {
    if (a.data.size() > kMaxData) {
        throw XdrError("WRITE3args: " + std::to_string(a.data.size()) + " bytes of data");
    }
    WRITE3args w{};
    w.file = to_wire(a.fh);
    w.offset = a.offset;
    w.count = wire_len(a.data.size());
    set_enum_bits(w.stable, static_cast<uint32_t>(a.stable));
    w.data.data_len = wire_len(a.data.size());
    w.data.data_val = const_cast<char*>(a.data.data());
    return encode_wire(w, &xdr_WRITE3args, kHeadroom + a.data.size(), "WRITE3args");
}
std::vector<char> encode(const CommitArgs& a) {
    return encode_wire(COMMIT3args{to_wire(a.fh), a.offset, a.count}, &xdr_COMMIT3args, kHeadroom,
                       "COMMIT3args");
}
std::vector<char> encode_mnt_args(const std::string& dirpath) {
    return encode_wire(const_cast<char*>(dirpath.c_str()), &xdr_dirpath, kHeadroom + dirpath.size(),
                       "MNT dirpath");
}

GetattrArgs decode_getattr_args(std::span<const char> bytes) {
    Decoded<GETATTR3args> w(&xdr_GETATTR3args, "GETATTR3args");
    w.decode(bytes);
    return GetattrArgs{from_wire(w.value.object)};
}
ReadArgs decode_read_args(std::span<const char> bytes) {
    Decoded<READ3args> w(&xdr_READ3args, "READ3args");
    w.decode(bytes);
    return ReadArgs{from_wire(w.value.file), w.value.offset, w.value.count};
}
WriteArgs decode_write_args(std::span<const char> bytes) {
    Decoded<WRITE3args> w(&xdr_WRITE3args, "WRITE3args");
    w.lend_data(w.value.data.data_val, bytes.size());
    w.decode(bytes);
    WriteArgs a;
    a.fh = from_wire(w.value.file);
    a.offset = w.value.offset;
    a.stable = static_cast<Stable>(enum_bits(w.value.stable));
    a.data = w.take_data(w.value.data.data_len);
    if (w.value.count != a.data.size()) { // count must equal the data's length
        throw XdrError("WRITE3args: count " + std::to_string(w.value.count) + " with " +
                       std::to_string(a.data.size()) + " bytes of data");
    }
    return a;
}
CommitArgs decode_commit_args(std::span<const char> bytes) {
    Decoded<COMMIT3args> w(&xdr_COMMIT3args, "COMMIT3args");
    w.decode(bytes);
    return CommitArgs{from_wire(w.value.file), w.value.offset, w.value.count};
}
std::string decode_mnt_args(std::span<const char> bytes) {
    Decoded<dirpath> w(&xdr_dirpath, "MNT dirpath");
    w.decode(bytes);
    return w.value;
}

std::vector<char> encode(const GetattrResult& r) {
    GETATTR3res w{};
    set_enum_bits(w.status, static_cast<uint32_t>(r.status));
    if (r.status == Status::ok) {
        if (!r.attrs) {
            throw XdrError("GETATTR3res: NFS3_OK without attributes");
        }
        w.GETATTR3res_u.resok.obj_attributes = to_wire(*r.attrs);
    }
    return encode_wire(w, &xdr_GETATTR3res, kHeadroom, "GETATTR3res");
}
std::vector<char> encode(const ReadResult& r) {
    READ3res w{};
    set_enum_bits(w.status, static_cast<uint32_t>(r.status));
    if (r.status != Status::ok) {
        w.READ3res_u.resfail.file_attributes = to_wire(r.attrs);
        return encode_wire(w, &xdr_READ3res, kHeadroom, "READ3res");
    }
    if (r.data.size() > kMaxData) {
        throw XdrError("READ3res: " + std::to_string(r.data.size()) + " bytes of data");
    }
    READ3resok& ok = w.READ3res_u.resok;
    ok.file_attributes = to_wire(r.attrs);
    ok.count = r.count;
    ok.eof = r.eof;
    ok.data.data_len = wire_len(r.data.size());
    ok.data.data_val = const_cast<char*>(r.data.data());
    return encode_wire(w, &xdr_READ3res, kHeadroom + r.data.size(), "READ3res");
}
std::vector<char> encode(const WriteResult& r) {
    WRITE3res w{};
    set_enum_bits(w.status, static_cast<uint32_t>(r.status));
    if (r.status != Status::ok) {
        w.WRITE3res_u.resfail.file_wcc = to_wire(r.wcc);
    } else {
        WRITE3resok& ok = w.WRITE3res_u.resok;
        ok.file_wcc = to_wire(r.wcc);
        ok.count = r.count;
        set_enum_bits(ok.committed, static_cast<uint32_t>(r.committed));
        to_wire(r.verf, ok.verf);
    }
    return encode_wire(w, &xdr_WRITE3res, kHeadroom, "WRITE3res");
}
std::vector<char> encode(const CommitResult& r) {
    COMMIT3res w{};
    set_enum_bits(w.status, static_cast<uint32_t>(r.status));
    if (r.status != Status::ok) {
        w.COMMIT3res_u.resfail.file_wcc = to_wire(r.wcc);
    } else {
        w.COMMIT3res_u.resok.file_wcc = to_wire(r.wcc);
        to_wire(r.verf, w.COMMIT3res_u.resok.verf);
    }
    return encode_wire(w, &xdr_COMMIT3res, kHeadroom, "COMMIT3res");
}
std::vector<char> encode(const MountResult& r) {
    std::vector<int> flavors(r.auth_flavors.begin(), r.auth_flavors.end());
    mountres3 w{};
    set_enum_bits(w.fhs_status, r.status);
    if (r.status == MNT3_OK) {
        mountres3_ok& ok = w.mountres3_u.mountinfo;
        ok.fhandle.fhandle3_len = wire_len(r.fh.bytes.size());
        ok.fhandle.fhandle3_val = const_cast<char*>(r.fh.bytes.data());
        ok.auth_flavors.auth_flavors_len = wire_len(flavors.size());
        ok.auth_flavors.auth_flavors_val = flavors.data();
    }
    return encode_wire(w, &xdr_mountres3_bounded, kHeadroom + 4 * flavors.size(), "mountres3");
}

void decode(std::span<const char> bytes, GetattrResult& out) {
    Decoded<GETATTR3res> w(&xdr_GETATTR3res, "GETATTR3res");
    w.decode(bytes);
    out.status = static_cast<Status>(enum_bits(w.value.status));
    out.attrs.reset();
    if (out.status == Status::ok) {
        out.attrs = from_wire(w.value.GETATTR3res_u.resok.obj_attributes);
    }
}
void decode(std::span<const char> bytes, ReadResult& out) {
    Decoded<READ3res> w(&xdr_READ3res, "READ3res");
    w.lend_data(w.value.READ3res_u.resok.data.data_val, bytes.size());
    w.decode(bytes);
    out.status = static_cast<Status>(enum_bits(w.value.status));
    if (out.status != Status::ok) {
        out.attrs = from_wire(w.value.READ3res_u.resfail.file_attributes);
        return;
    }
    const READ3resok& ok = w.value.READ3res_u.resok;
    out.attrs = from_wire(ok.file_attributes);
    out.count = ok.count;
    out.eof = ok.eof != 0;
    out.data = w.take_data(ok.data.data_len);
    if (out.count != out.data.size()) {
        throw XdrError("READ3res: count " + std::to_string(out.count) + " with " +
                       std::to_string(out.data.size()) + " bytes of data");
    }
}
void decode(std::span<const char> bytes, WriteResult& out) {
    Decoded<WRITE3res> w(&xdr_WRITE3res, "WRITE3res");
    w.decode(bytes);
    out.status = static_cast<Status>(enum_bits(w.value.status));
    if (out.status != Status::ok) {
        out.wcc = from_wire(w.value.WRITE3res_u.resfail.file_wcc);
        return;
    }
    const WRITE3resok& ok = w.value.WRITE3res_u.resok;
    out.wcc = from_wire(ok.file_wcc);
    out.count = ok.count;
    out.committed = static_cast<Stable>(enum_bits(ok.committed));
    out.verf = from_wire(ok.verf);
}
void decode(std::span<const char> bytes, CommitResult& out) {
    Decoded<COMMIT3res> w(&xdr_COMMIT3res, "COMMIT3res");
    w.decode(bytes);
    out.status = static_cast<Status>(enum_bits(w.value.status));
    if (out.status != Status::ok) {
        out.wcc = from_wire(w.value.COMMIT3res_u.resfail.file_wcc);
        return;
    }
    out.wcc = from_wire(w.value.COMMIT3res_u.resok.file_wcc);
    out.verf = from_wire(w.value.COMMIT3res_u.resok.verf);
}
MountResult decode_mount_result(std::span<const char> bytes) {
    Decoded<mountres3> w(&xdr_mountres3_bounded, "mountres3");
    w.decode(bytes);
    MountResult r;
    r.status = enum_bits(w.value.fhs_status);
    if (r.status == MNT3_OK) {
        const mountres3_ok& ok = w.value.mountres3_u.mountinfo;
        r.fh.bytes.assign(ok.fhandle.fhandle3_val,
                          ok.fhandle.fhandle3_val + ok.fhandle.fhandle3_len);
        const int* f = ok.auth_flavors.auth_flavors_val;
        r.auth_flavors.assign(f, f + ok.auth_flavors.auth_flavors_len);
    }
    return r;
}

// ---- Client. ------------------------------------------------------------------------

namespace {

// A one-line summary of a result for the trace.
std::string summary(const CallOutcome& r) {
    return r.describe();
}
std::string summary(const GetattrResult& r) {
    return r.describe() + (r.attrs ? " " + format_fattr(*r.attrs) : "");
}
std::string summary(const ReadResult& r) {
    return r.describe() + " count=" + std::to_string(r.count) + (r.eof ? " eof" : "") +
           (r.attrs ? " " + format_fattr(*r.attrs) : "");
}
std::string summary(const WriteResult& r) {
    return r.describe() + " count=" + std::to_string(r.count) + " " + stable_name(r.committed) +
           (r.wcc.after ? " " + format_fattr(*r.wcc.after) : " (no post-op attributes)");
}
std::string summary(const CommitResult& r) {
    return r.describe() +
           (r.wcc.after ? " " + format_fattr(*r.wcc.after) : " (no post-op attributes)");
}

template <typename Result> void decode_reply(const RpcReply& reply, Result& out) {
    out.rpc_status = reply.status;
    out.elapsed = reply.elapsed;
    if (!reply.ok()) {
        out.error = reply.detail;
        return;
    }
    try {
        decode(reply.body(), out);
    } catch (const XdrError& e) {
        out.error = e.what();
    }
}

void decode_reply(const RpcReply& reply, CallOutcome& out) {
    out.rpc_status = reply.status;
    out.elapsed = reply.elapsed;
    if (!reply.ok()) {
        out.error = reply.detail;
    } else if (!reply.body().empty()) {
        out.error = std::to_string(reply.body().size()) + " bytes in a NULL reply";
    } else {
        out.status = Status::ok;
    }
}

} // namespace

Client::Client(ClientOptions options) : options_(std::move(options)) {
    if (options_.label.empty()) {
        options_.label = options_.host + ":" + std::to_string(options_.port);
    }
}

Client::~Client() {
    if (transport_) {
        transport_->close();
    }
}

std::unique_ptr<Client> Client::connect(ClientOptions options) {
    std::unique_ptr<Client> c(new Client(std::move(options)));
    try {
        c->transport_ =
            RpcTransport::connect(c->options_.host, c->options_.port, c->options_.connect_timeout);
    } catch (const std::exception& e) {
        throw TransportError(RpcStatus::connection_lost,
                             "NFSv3 data server " + c->options_.label + ": " + e.what());
    }
    return c;
}

void Client::trace(const std::string& line) const {
    if (options_.trace) {
        options_.trace("nfs3 " + options_.label + " " + line);
    }
}

template <typename Result>
std::future<Result> Client::start(uint32_t proc, const AuthSys& cred, std::vector<char> args,
                                  std::string what) {
    auto promise = std::make_shared<std::promise<Result>>();
    std::future<Result> future = promise->get_future();
    trace("=> " + what + " (uid " + std::to_string(cred.uid) + ", gid " + std::to_string(cred.gid) +
          ")");
    transport_->call_async(kProgram, kVersion, proc, cred, args, options_.timeout,
                           [this, promise, what](RpcReply&& reply) {
                               Result r;
                               decode_reply(reply, r);
                               if (options_.trace) {
                                   trace("<= " + what + ": " + summary(r));
                               }
                               promise->set_value(std::move(r));
                           });
    return future;
}

CallOutcome Client::null(const AuthSys& cred) {
    return start<CallOutcome>(kProcNull, cred, {}, "NULL").get();
}

std::future<GetattrResult> Client::getattr_async(const AuthSys& cred, const FileHandle& fh) {
    return start<GetattrResult>(kProcGetattr, cred, encode(GetattrArgs{fh}),
                                "GETATTR " + fh_prefix(fh));
}

std::future<ReadResult> Client::read_async(const AuthSys& cred, const FileHandle& fh,
                                           uint64_t offset, uint32_t count) {
    return start<ReadResult>(kProcRead, cred, encode(ReadArgs{fh, offset, count}),
                             "READ " + fh_prefix(fh) + " " + std::to_string(offset) + "+" +
                                 std::to_string(count));
}

std::future<WriteResult> Client::write_async(const AuthSys& cred, const FileHandle& fh,
                                             uint64_t offset, std::span<const char> data,
                                             Stable stable) {
    // Encoded directly (not through WriteArgs) to copy the payload once.
    if (fh.bytes.size() > kFhSizeMax || data.size() > kMaxData) {
        throw XdrError("WRITE3args: filehandle of " + std::to_string(fh.bytes.size()) +
                       " bytes or " + std::to_string(data.size()) + " bytes of data is too large");
    }
    WRITE3args w{};
    w.file = to_wire(fh);
    w.offset = offset;
    w.count = wire_len(data.size());
    set_enum_bits(w.stable, static_cast<uint32_t>(stable));
    w.data.data_len = wire_len(data.size());
    w.data.data_val = const_cast<char*>(data.data());
    std::vector<char> args = encode_wire(w, &xdr_WRITE3args, kHeadroom + data.size(), "WRITE3args");
    return start<WriteResult>(kProcWrite, cred, std::move(args),
                              "WRITE " + fh_prefix(fh) + " " + std::to_string(offset) + "+" +
                                  std::to_string(data.size()) + " " + stable_name(stable));
}

std::future<CommitResult> Client::commit_async(const AuthSys& cred, const FileHandle& fh,
                                               uint64_t offset, uint32_t count) {
    return start<CommitResult>(kProcCommit, cred, encode(CommitArgs{fh, offset, count}),
                               "COMMIT " + fh_prefix(fh) + " " + std::to_string(offset) + "+" +
                                   std::to_string(count));
}

GetattrResult Client::getattr(const AuthSys& cred, const FileHandle& fh) {
    return getattr_async(cred, fh).get();
}
ReadResult Client::read(const AuthSys& cred, const FileHandle& fh, uint64_t offset,
                        uint32_t count) {
    return read_async(cred, fh, offset, count).get();
}
WriteResult Client::write(const AuthSys& cred, const FileHandle& fh, uint64_t offset,
                          std::span<const char> data, Stable stable) {
    return write_async(cred, fh, offset, data, stable).get();
}
CommitResult Client::commit(const AuthSys& cred, const FileHandle& fh, uint64_t offset,
                            uint32_t count) {
    return commit_async(cred, fh, offset, count).get();
}

FileHandle mount(const std::string& host, uint16_t mount_port, const std::string& dirpath,
                 const AuthSys& cred, std::chrono::milliseconds timeout) {
    const std::string where = host + ":" + std::to_string(mount_port);
    std::unique_ptr<RpcTransport> t;
    try {
        t = RpcTransport::connect(host, mount_port, timeout);
    } catch (const std::exception& e) {
        throw TransportError(RpcStatus::connection_lost, "MOUNT " + where + ": " + e.what());
    }
    const std::vector<char> args = encode_mnt_args(dirpath);
    RpcReply reply =
        t->call(kMountProgram, kMountVersion, kMountProcMnt, cred, args, timeout).get();
    t->close();
    if (!reply.ok()) {
        throw TransportError(reply.status, "MOUNT " + where + " " + dirpath + ": " + reply.detail);
    }
    MountResult r;
    try {
        r = decode_mount_result(reply.body());
    } catch (const XdrError& e) {
        throw TransportError(RpcStatus::bad_reply, "MOUNT " + where + ": " + e.what());
    }
    if (r.status != 0) {
        // mountstat3 shares its numbers with nfsstat3 for the errors it can return.
        throw NfsError(r.status, 0,
                       "MOUNT " + where + " " + dirpath +
                           " refused: " + status_name(static_cast<Status>(r.status)));
    }
    return r.fh;
}

} // namespace flexfiles::client::nfs3
