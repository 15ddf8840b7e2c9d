// SPDX-License-Identifier: LGPL-3.0-or-later
#include "compound.hpp"

#include "ganesha_xdr.h"
#include "model/hex.hpp"
#include "nfs4_names.hpp"
#include "xdr_stream.hpp"

#include <algorithm>
#include <cstring>

namespace flexfiles::client {

namespace {

// More results than any sane reply carries; bounds the loop on a hostile count.
constexpr uint32_t kMaxResults = 4096;
// NFSv4 tags are arbitrary UTF-8; bound what we accept.
constexpr uint32_t kMaxTagBytes = 1024;

// Every compound labels its ops (a filehandle, a stateid) for traces and errors, so this is
// on the benchmarks' path: to_hex's digit table, not a printf per byte.
std::string hex_prefix(std::span<const char> bytes, std::size_t max_bytes) {
    std::string out = to_hex(
        {reinterpret_cast<const std::uint8_t*>(bytes.data()), std::min(bytes.size(), max_bytes)});
    if (bytes.size() > max_bytes) {
        out += "..";
    }
    return out;
}

// Result types Ganesha's xdr_nfs_resop4 decodes: everything below NFS4_OP_LAST_ONE of
// the nfsv41.h we are built against, and OP_ILLEGAL.
bool ganesha_decodes(uint32_t opnum) {
    return (opnum >= NFS4_OP_ACCESS && opnum < NFS4_OP_LAST_ONE) || opnum == NFS4_OP_ILLEGAL;
}

// Ops Ganesha's decoder may not know whose result is an nfsstat4 and nothing else, so
// the results after them can still be found. Op 77 LAYOUT_WCC4res is { nfsstat4 }
// (RFC 9766 section 3.3); a header built with the op 77 patch decodes it typed anyway.
bool status_only_result(uint32_t opnum) {
    return opnum == kOpLayoutWcc;
}

// Decodes one result at the stream's position into `r`. Returns an error message.
std::string decode_op_result(XdrDecoder& d, std::size_t index, bool last, OpResult& r) {
    const std::size_t start = d.pos();
    uint32_t status = 0;
    if (!d.u32(r.opnum) || !d.u32(status)) {
        return "result #" + std::to_string(index) + " is truncated";
    }
    r.status = status;
    r.body_offset = start + 4;

    if (ganesha_decodes(r.opnum)) {
        d.set_pos(start);
        if (!ff_xdr_decode_resop(d.xdr(), &r.res)) {
            return "cannot decode the result of " + op_name(r.opnum) + " (result #" +
                   std::to_string(index) + ")";
        }
        r.typed = true;
    } else if (!status_only_result(r.opnum) && r.status == NFS4_OK) {
        // Unknown shape: only the last result can extend to the end of the record.
        if (!last) {
            return "result #" + std::to_string(index) + " is " + op_name(r.opnum) +
                   " with NFS4_OK, whose result this library cannot decode";
        }
        d.set_pos(d.size());
    }
    r.body_size = d.pos() - r.body_offset;
    return {};
}

} // namespace

// ---- Small types ------------------------------------------------------------------

std::string FileHandle::hex() const {
    return hex_prefix(bytes, bytes.size());
}

stateid4 anonymous_stateid() {
    stateid4 s{};
    return s;
}

stateid4 current_stateid() {
    stateid4 s{};
    s.seqid = 1;
    return s;
}

std::string format_stateid(const stateid4& s) {
    return std::to_string(s.seqid) + ":" +
           hex_prefix(std::span<const char>(s.other, sizeof(s.other)), sizeof(s.other));
}

NfsError::NfsError(uint32_t status, uint32_t opnum, const std::string& what)
    : std::runtime_error(what), status_(status), opnum_(opnum) {}

// ---- Compound ---------------------------------------------------------------------

Compound::Compound(std::string tag) : tag_(std::move(tag)) {}

Compound& Compound::no_sequence() {
    sequence_ = false;
    return *this;
}

Compound& Compound::retry_on_delay(bool on) {
    retry_delay_ = on;
    return *this;
}

Compound& Compound::cache_this(bool on) {
    cache_this_ = on;
    return *this;
}

Compound& Compound::minor_version(uint32_t minor) {
    minor_ = minor;
    return *this;
}

Compound& Compound::set_tag(std::string tag) {
    tag_ = std::move(tag);
    return *this;
}

char* Compound::keep(std::span<const char> bytes) {
    auto& stored = storage_.emplace_back(bytes.begin(), bytes.end());
    return stored.data();
}

char* Compound::keep_string(std::string_view s) {
    auto& stored = storage_.emplace_back(s.begin(), s.end());
    stored.push_back('\0'); // Ganesha's encoders never read it; printf-safe for labels
    return stored.data();
}

Compound& Compound::add(nfs_argop4 op, std::string label) {
    Op entry;
    entry.opnum = op.argop;
    entry.args = op;
    entry.label = label.empty() ? op_name(op.argop) : std::move(label);
    ops_.push_back(std::move(entry));
    return *this;
}

Compound& Compound::typed(const nfs_argop4& op, std::string label) {
    return add(op, std::move(label));
}

Compound& Compound::raw(uint32_t opnum, std::span<const char> xdr_args, std::string label) {
    return add_raw(opnum, std::vector<char>(xdr_args.begin(), xdr_args.end()), std::move(label));
}

Compound& Compound::add_raw(uint32_t opnum, std::vector<char>&& xdr_args, std::string label) {
    Op entry;
    entry.opnum = opnum;
    entry.is_raw = true;
    const std::vector<char>& stored = storage_.emplace_back(std::move(xdr_args));
    entry.raw_args = std::span<const char>(stored.data(), stored.size());
    entry.label = label.empty()
                      ? op_name(opnum) + " (raw, " + std::to_string(stored.size()) + " bytes)"
                      : std::move(label);
    payload_bytes_ += stored.size();
    ops_.push_back(std::move(entry));
    return *this;
}

static nfs_argop4 make_op(nfs_opnum4 opnum) {
    nfs_argop4 op;
    std::memset(&op, 0, sizeof(op));
    op.argop = opnum;
    return op;
}

Compound& Compound::putrootfh() {
    return add(make_op(NFS4_OP_PUTROOTFH), {});
}
Compound& Compound::putpubfh() {
    return add(make_op(NFS4_OP_PUTPUBFH), {});
}
Compound& Compound::getfh() {
    return add(make_op(NFS4_OP_GETFH), {});
}
Compound& Compound::savefh() {
    return add(make_op(NFS4_OP_SAVEFH), {});
}
Compound& Compound::restorefh() {
    return add(make_op(NFS4_OP_RESTOREFH), {});
}
Compound& Compound::lookupp() {
    return add(make_op(NFS4_OP_LOOKUPP), {});
}

Compound& Compound::putfh(const FileHandle& fh) {
    nfs_argop4 op = make_op(NFS4_OP_PUTFH);
    op.nfs_argop4_u.opputfh.object.nfs_fh4_len = static_cast<u_int>(fh.bytes.size());
    op.nfs_argop4_u.opputfh.object.nfs_fh4_val = keep(fh.bytes);
    return add(op, "PUTFH " + hex_prefix(fh.bytes, 12));
}

Compound& Compound::lookup(std::string_view name) {
    nfs_argop4 op = make_op(NFS4_OP_LOOKUP);
    op.nfs_argop4_u.oplookup.objname.utf8string_len = static_cast<u_int>(name.size());
    op.nfs_argop4_u.oplookup.objname.utf8string_val = keep_string(name);
    return add(op, "LOOKUP \"" + std::string(name) + "\"");
}

Compound& Compound::remove(std::string_view name) {
    nfs_argop4 op = make_op(NFS4_OP_REMOVE);
    op.nfs_argop4_u.opremove.target.utf8string_len = static_cast<u_int>(name.size());
    op.nfs_argop4_u.opremove.target.utf8string_val = keep_string(name);
    return add(op, "REMOVE \"" + std::string(name) + "\"");
}

Compound& Compound::walk(std::string_view path) {
    putrootfh();
    std::size_t pos = 0;
    while (pos <= path.size()) {
        std::size_t end = path.find('/', pos);
        if (end == std::string_view::npos) {
            end = path.size();
        }
        const std::string_view part = path.substr(pos, end - pos);
        if (part == "..") {
            lookupp();
        } else if (!part.empty() && part != ".") {
            lookup(part);
        }
        pos = end + 1;
    }
    return *this;
}

Compound& Compound::getattr(const AttrMask& attrs) {
    nfs_argop4 op = make_op(NFS4_OP_GETATTR);
    op.nfs_argop4_u.opgetattr.attr_request = attrs.to_bitmap4();
    return add(op, "GETATTR " + attrs.describe());
}

Compound& Compound::setattr(const stateid4& stateid, const Fattr& attrs) {
    const EncodedFattr enc = encode_fattr4(attrs);
    nfs_argop4 op = make_op(NFS4_OP_SETATTR);
    op.nfs_argop4_u.opsetattr.stateid = stateid;
    fattr4& f = op.nfs_argop4_u.opsetattr.obj_attributes;
    f.attrmask = enc.mask.to_bitmap4();
    f.attr_vals.attrlist4_len = static_cast<u_int>(enc.values.size());
    f.attr_vals.attrlist4_val = keep(enc.values);
    payload_bytes_ += enc.values.size();
    return add(op, "SETATTR " + enc.mask.describe());
}

Compound& Compound::open(const OpenArgs& a) {
    nfs_argop4 op = make_op(NFS4_OP_OPEN);
    OPEN4args& o = op.nfs_argop4_u.opopen;
    o.seqid = 0;
    o.share_access = a.share_access;
    o.share_deny = a.share_deny;
    o.owner.clientid = a.clientid;
    o.owner.owner.owner_len = static_cast<u_int>(a.owner.size());
    o.owner.owner.owner_val = keep_string(a.owner);
    std::string label = "OPEN";
    if (a.create) {
        o.openhow.opentype = OPEN4_CREATE;
        createhow4& how = o.openhow.openflag4_u.how;
        how.mode = a.create_mode;
        const EncodedFattr enc = encode_fattr4(a.create_attrs);
        fattr4 attrs{};
        attrs.attrmask = enc.mask.to_bitmap4();
        attrs.attr_vals.attrlist4_len = static_cast<u_int>(enc.values.size());
        attrs.attr_vals.attrlist4_val = keep(enc.values);
        switch (a.create_mode) {
        case EXCLUSIVE4:
            std::memcpy(how.createhow4_u.createverf, a.verifier.data(), NFS4_VERIFIER_SIZE);
            break;
        case EXCLUSIVE4_1:
            std::memcpy(how.createhow4_u.ch_createboth.cva_verf, a.verifier.data(),
                        NFS4_VERIFIER_SIZE);
            how.createhow4_u.ch_createboth.cva_attrs = attrs;
            break;
        default:
            how.createhow4_u.createattrs = attrs;
            break;
        }
        label += " create";
    } else {
        o.openhow.opentype = OPEN4_NOCREATE;
    }
    if (a.claim_fh) {
        o.claim.claim = CLAIM_FH;
        label += " (current fh)";
    } else {
        o.claim.claim = CLAIM_NULL;
        o.claim.open_claim4_u.file.utf8string_len = static_cast<u_int>(a.name.size());
        o.claim.open_claim4_u.file.utf8string_val = keep_string(a.name);
        label += " \"" + a.name + "\"";
    }
    label += " access=" + std::to_string(a.share_access) + " deny=" + std::to_string(a.share_deny);
    return add(op, label);
}

Compound& Compound::close(const stateid4& open_stateid) {
    nfs_argop4 op = make_op(NFS4_OP_CLOSE);
    op.nfs_argop4_u.opclose.seqid = 0;
    op.nfs_argop4_u.opclose.open_stateid = open_stateid;
    return add(op, "CLOSE " + format_stateid(open_stateid));
}

Compound& Compound::read(const stateid4& stateid, uint64_t offset, uint32_t count) {
    nfs_argop4 op = make_op(NFS4_OP_READ);
    op.nfs_argop4_u.opread.stateid = stateid;
    op.nfs_argop4_u.opread.offset = offset;
    op.nfs_argop4_u.opread.count = count;
    return add(op, "READ " + std::to_string(offset) + "+" + std::to_string(count));
}

Compound& Compound::write(const stateid4& stateid, uint64_t offset, std::span<const char> data,
                          stable_how4 stable) {
    nfs_argop4 op = make_op(NFS4_OP_WRITE);
    WRITE4args& w = op.nfs_argop4_u.opwrite;
    w.stateid = stateid;
    w.offset = offset;
    w.stable = stable;
    w.data.data_len = static_cast<u_int>(data.size());
    w.data.data_val = keep(data);
    payload_bytes_ += data.size();
    return add(op, "WRITE " + std::to_string(offset) + "+" + std::to_string(data.size()));
}

Compound& Compound::test_stateid(std::span<const stateid4> stateids) {
    nfs_argop4 op = make_op(NFS4_OP_TEST_STATEID);
    TEST_STATEID4args& t = op.nfs_argop4_u.optest_stateid;
    t.ts_stateids.ts_stateids_len = static_cast<u_int>(stateids.size());
    t.ts_stateids.ts_stateids_val = reinterpret_cast<stateid4*>(
        keep({reinterpret_cast<const char*>(stateids.data()), stateids.size_bytes()}));
    std::string label = "TEST_STATEID";
    for (const stateid4& s : stateids)
        label += " " + format_stateid(s);
    return add(op, label);
}

Compound& Compound::commit(uint64_t offset, uint32_t count) {
    nfs_argop4 op = make_op(NFS4_OP_COMMIT);
    op.nfs_argop4_u.opcommit.offset = offset;
    op.nfs_argop4_u.opcommit.count = count;
    return add(op, "COMMIT " + std::to_string(offset) + "+" + std::to_string(count));
}

Compound& Compound::sequence(const SEQUENCE4args& args) {
    nfs_argop4 op = make_op(NFS4_OP_SEQUENCE);
    op.nfs_argop4_u.opsequence = args;
    return add(op, "SEQUENCE slot=" + std::to_string(args.sa_slotid) +
                       " seq=" + std::to_string(args.sa_sequenceid));
}

Compound& Compound::reclaim_complete(bool one_fs) {
    nfs_argop4 op = make_op(NFS4_OP_RECLAIM_COMPLETE);
    op.nfs_argop4_u.opreclaim_complete.rca_one_fs = one_fs;
    return add(op, {});
}

Compound& Compound::destroy_session(const sessionid4& id) {
    nfs_argop4 op = make_op(NFS4_OP_DESTROY_SESSION);
    std::memcpy(op.nfs_argop4_u.opdestroy_session.dsa_sessionid, id, NFS4_SESSIONID_SIZE);
    return add(op, {});
}

Compound& Compound::destroy_clientid(clientid4 id) {
    nfs_argop4 op = make_op(NFS4_OP_DESTROY_CLIENTID);
    op.nfs_argop4_u.opdestroy_clientid.dca_clientid = id;
    return add(op, {});
}

Compound& Compound::bind_conn_to_session(const sessionid4& id, channel_dir_from_client4 dir) {
    nfs_argop4 op = make_op(NFS4_OP_BIND_CONN_TO_SESSION);
    std::memcpy(op.nfs_argop4_u.opbind_conn_to_session.bctsa_sessid, id, NFS4_SESSIONID_SIZE);
    op.nfs_argop4_u.opbind_conn_to_session.bctsa_dir = dir;
    op.nfs_argop4_u.opbind_conn_to_session.bctsa_use_conn_in_rdma_mode = false;
    return add(op, "BIND_CONN_TO_SESSION dir=" + std::to_string(dir));
}

std::vector<char> Compound::encode(uint32_t minorversion, const nfs_argop4* first) const {
    const std::size_t hint = 512 + 256 * (ops_.size() + 1) + payload_bytes_;
    return xdr_encode(hint, "COMPOUND4args", [&](XDR* x) {
        const uint32_t count = static_cast<uint32_t>(ops_.size() + (first ? 1 : 0));
        if (!xdr_put_opaque(x, tag_) || !xdr_put_u32(x, minorversion) || !xdr_put_u32(x, count)) {
            return false;
        }
        if (first && !ff_xdr_encode_argop(x, first)) {
            return false;
        }
        for (const Op& op : ops_) {
            if (op.is_raw) {
                if (!xdr_put_u32(x, op.opnum) || !xdr_put_raw(x, op.raw_args)) {
                    return false;
                }
                continue;
            }
            if (!ff_xdr_encode_argop(x, &op.args)) {
                return false;
            }
        }
        return true;
    });
}

std::string Compound::describe(const std::string& first_label) const {
    std::string out = first_label;
    for (const Op& op : ops_) {
        out += (out.empty() ? "" : " | ") + op.label;
    }
    return out;
}

// ---- CompoundResult ---------------------------------------------------------------

CompoundResult::~CompoundResult() {
    release();
}

CompoundResult::CompoundResult(CompoundResult&& other) noexcept {
    *this = std::move(other);
}

CompoundResult& CompoundResult::operator=(CompoundResult&& other) noexcept {
    if (this != &other) {
        release();
        rpc_status = other.rpc_status;
        error = std::move(other.error);
        status = other.status;
        tag = std::move(other.tag);
        ops_sent = other.ops_sent;
        sequence = std::move(other.sequence);
        ops = std::move(other.ops);
        record = std::move(other.record);
        elapsed = other.elapsed;
        attempts = other.attempts;
        // The decoded results now belong to this object only.
        other.sequence.reset();
        other.ops.clear();
    }
    return *this;
}

void CompoundResult::release() {
    auto free_one = [](OpResult& r) {
        if (r.typed) {
            ff_xdr_free_resop(&r.res);
            r.typed = false;
        }
    };
    if (sequence) {
        free_one(*sequence);
    }
    for (OpResult& r : ops) {
        free_one(r);
    }
}

std::optional<uint32_t> CompoundResult::status_of(std::size_t i) const {
    if (i < ops.size()) {
        return ops[i].status;
    }
    return std::nullopt;
}

const OpResult& CompoundResult::op(std::size_t i) const {
    if (i >= ops.size()) {
        throw NfsError(status, 0,
                       "op #" + std::to_string(i) + " was not executed (" +
                           std::to_string(ops.size()) + " results, compound status " +
                           status_name(status) + ")");
    }
    return ops[i];
}

std::span<const char> CompoundResult::raw_result(std::size_t i) const {
    const OpResult& r = op(i);
    return std::span<const char>(record).subspan(r.body_offset, r.body_size);
}

void CompoundResult::check(std::string_view what) const {
    const std::string prefix = what.empty() ? std::string() : std::string(what) + ": ";
    if (rpc_status != RpcStatus::ok) {
        throw TransportError(rpc_status, prefix + error);
    }
    if (!error.empty()) {
        throw TransportError(RpcStatus::bad_reply, prefix + error);
    }
    if (sequence && sequence->status != NFS4_OK) {
        throw NfsError(sequence->status, NFS4_OP_SEQUENCE,
                       prefix + "SEQUENCE failed: " + status_name(sequence->status));
    }
    for (std::size_t i = 0; i < ops.size(); ++i) {
        if (ops[i].status != NFS4_OK) {
            throw NfsError(ops[i].status, ops[i].opnum,
                           prefix + op_name(ops[i].opnum) + " (op #" + std::to_string(i) +
                               ") failed: " + status_name(ops[i].status));
        }
    }
    if (status != NFS4_OK) {
        throw NfsError(status, 0, prefix + "COMPOUND failed: " + status_name(status));
    }
    if (ops.size() < ops_sent) {
        throw NfsError(NFS4ERR_SERVERFAULT, 0,
                       prefix + "only " + std::to_string(ops.size()) + " of " +
                           std::to_string(ops_sent) + " results came back");
    }
}

const OpResult& CompoundResult::expect(std::size_t i, uint32_t opnum) const {
    const OpResult& r = op(i);
    if (r.status != NFS4_OK) {
        throw NfsError(r.status, r.opnum,
                       op_name(r.opnum) + " (op #" + std::to_string(i) +
                           ") failed: " + status_name(r.status));
    }
    if (r.opnum != opnum) {
        throw NfsError(NFS4ERR_SERVERFAULT, r.opnum,
                       "op #" + std::to_string(i) + " is " + op_name(r.opnum) + ", not " +
                           op_name(opnum));
    }
    if (!r.typed) {
        throw NfsError(NFS4ERR_BADXDR, r.opnum,
                       op_name(r.opnum) + " (op #" + std::to_string(i) + ") was not decoded");
    }
    return r;
}

FileHandle CompoundResult::fh(std::size_t i) const {
    const nfs_fh4& obj =
        expect(i, NFS4_OP_GETFH).res.nfs_resop4_u.opgetfh.GETFH4res_u.resok4.object;
    FileHandle out;
    out.bytes.assign(obj.nfs_fh4_val, obj.nfs_fh4_val + obj.nfs_fh4_len);
    return out;
}

Fattr CompoundResult::attrs(std::size_t i) const {
    return decode_fattr4(
        expect(i, NFS4_OP_GETATTR).res.nfs_resop4_u.opgetattr.GETATTR4res_u.resok4.obj_attributes);
}

const OPEN4resok& CompoundResult::open(std::size_t i) const {
    return expect(i, NFS4_OP_OPEN).res.nfs_resop4_u.opopen.OPEN4res_u.resok4;
}

stateid4 CompoundResult::stateid(std::size_t i) const {
    const OpResult& r = op(i);
    if (r.opnum == NFS4_OP_CLOSE) {
        return expect(i, NFS4_OP_CLOSE).res.nfs_resop4_u.opclose.CLOSE4res_u.open_stateid;
    }
    return open(i).stateid;
}

const READ4resok& CompoundResult::read(std::size_t i) const {
    return expect(i, NFS4_OP_READ).res.nfs_resop4_u.opread.READ4res_u.resok4;
}

const WRITE4resok& CompoundResult::write(std::size_t i) const {
    return expect(i, NFS4_OP_WRITE).res.nfs_resop4_u.opwrite.WRITE4res_u.resok4;
}

const COMMIT4resok& CompoundResult::commit(std::size_t i) const {
    return expect(i, NFS4_OP_COMMIT).res.nfs_resop4_u.opcommit.COMMIT4res_u.resok4;
}

std::vector<uint32_t> CompoundResult::test_stateid(std::size_t i) const {
    const auto& codes =
        expect(i, NFS4_OP_TEST_STATEID)
            .res.nfs_resop4_u.optest_stateid.TEST_STATEID4res_u.tsr_resok4.tsr_status_codes;
    return {codes.tsr_status_codes_val, codes.tsr_status_codes_val + codes.tsr_status_codes_len};
}

const SEQUENCE4resok& CompoundResult::sequence_ok() const {
    if (!sequence || sequence->status != NFS4_OK || !sequence->typed) {
        throw NfsError(sequence ? sequence->status : uint32_t{NFS4ERR_OP_NOT_IN_SESSION},
                       NFS4_OP_SEQUENCE, "no successful SEQUENCE result");
    }
    return sequence->res.nfs_resop4_u.opsequence.SEQUENCE4res_u.sr_resok4;
}

std::string CompoundResult::describe() const {
    if (rpc_status != RpcStatus::ok) {
        return std::string("RPC ") + to_string(rpc_status) + ": " + error;
    }
    std::string out = status_name(status) + ":";
    const char* sep = " ";
    auto one = [&](const OpResult& r) {
        out += sep + op_name(r.opnum) + " " + status_name(r.status);
        sep = " | ";
    };
    if (sequence) {
        one(*sequence);
    }
    for (const OpResult& r : ops) {
        one(r);
    }
    if (ops.size() < ops_sent) {
        out += " (" + std::to_string(ops_sent - ops.size()) + " not executed)";
    }
    if (!error.empty()) {
        out += " [" + error + "]";
    }
    return out;
}

CompoundResult decode_compound_reply(std::vector<char>&& record, std::size_t body_offset) {
    CompoundResult out;
    out.record = std::move(record);
    XdrDecoder d(out.record);
    uint32_t status = 0, count = 0;
    if (!d.set_pos(body_offset) || !d.u32(status) || !d.string(out.tag, kMaxTagBytes) ||
        !d.u32(count)) {
        out.error = "COMPOUND4res header is truncated";
        return out;
    }
    out.status = status;
    if (count > kMaxResults) {
        out.error = "COMPOUND4res claims " + std::to_string(count) + " results";
        return out;
    }
    for (uint32_t i = 0; i < count; ++i) {
        OpResult r;
        std::string err = decode_op_result(d, i, i + 1 == count, r);
        const bool decoded_status = r.body_offset != 0;
        if (decoded_status) {
            out.ops.push_back(std::move(r));
        }
        if (!err.empty()) {
            out.error = std::move(err);
            return out;
        }
    }
    if (d.remaining() != 0) {
        out.error = std::to_string(d.remaining()) + " bytes follow the last result";
    }
    return out;
}

} // namespace flexfiles::client
