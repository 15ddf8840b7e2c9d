// SPDX-License-Identifier: LGPL-3.0-or-later
#include "backchannel.hpp"

#include "ganesha_xdr.h"
#include "nfs4_names.hpp"
#include "xdr_stream.hpp"

#include <cstring>
#include <rpc/rpc.h>

namespace flexfiles::client {

namespace {

// Every CB_*4res starts with its nfsstat4, and the union sits right after resop.
void set_status(nfs_cb_resop4& res, nfsstat4 status) {
    std::memcpy(&res.nfs_cb_resop4_u, &status, sizeof(status));
}

} // namespace

Backchannel::Backchannel(uint32_t cb_program, Trace trace)
    : program_(cb_program), trace_(std::move(trace)), slot_seqids_(1, 0) {}

void Backchannel::trace(const std::string& line) const {
    if (trace_) {
        trace_(line);
    }
}

void Backchannel::bind(const sessionid4& id, uint32_t slots) {
    std::lock_guard lock(mu_);
    std::memcpy(sessionid_, id, NFS4_SESSIONID_SIZE);
    slot_seqids_.assign(std::max<uint32_t>(slots, 1), 0);
}

void Backchannel::set_handler(CallbackOpHandler handler) {
    std::lock_guard lock(mu_);
    handler_ = std::move(handler);
}

nfsstat4 Backchannel::sequence(const CB_SEQUENCE4args& a, CB_SEQUENCE4resok& ok) {
    if (std::memcmp(a.csa_sessionid, sessionid_, NFS4_SESSIONID_SIZE) != 0) {
        return NFS4ERR_BADSESSION;
    }
    if (a.csa_slotid >= slot_seqids_.size()) {
        return NFS4ERR_BADSLOT;
    }
    uint32_t& last = slot_seqids_[a.csa_slotid];
    if (last != 0 && a.csa_sequenceid == last) {
        return NFS4ERR_RETRY_UNCACHED_REP;
    }
    if (a.csa_sequenceid != last + 1) {
        return NFS4ERR_SEQ_MISORDERED;
    }
    last = a.csa_sequenceid;
    std::memcpy(ok.csr_sessionid, a.csa_sessionid, NFS4_SESSIONID_SIZE);
    ok.csr_sequenceid = a.csa_sequenceid;
    ok.csr_slotid = a.csa_slotid;
    ok.csr_highest_slotid = static_cast<uint32_t>(slot_seqids_.size() - 1);
    ok.csr_target_highest_slotid = ok.csr_highest_slotid;
    return NFS4_OK;
}

std::optional<RpcCallReply> Backchannel::answer(const RpcCall& call) {
    if (call.prog != program_) {
        trace("<= CALL for program " + std::to_string(call.prog) + ": PROG_UNAVAIL");
        return RpcCallReply{PROG_UNAVAIL, {}};
    }
    if (call.vers != kCbVersion) {
        trace("<= CALL for callback version " + std::to_string(call.vers) + ": PROG_MISMATCH");
        return RpcCallReply{PROG_MISMATCH, {}, kCbVersion, kCbVersion};
    }
    if (call.proc == kCbProcNull) {
        trace("<= CB_NULL");
        answered_++;
        return RpcCallReply{SUCCESS, {}};
    }
    if (call.proc != kCbProcCompound) {
        trace("<= callback procedure " + std::to_string(call.proc) + ": PROC_UNAVAIL");
        return RpcCallReply{PROC_UNAVAIL, {}};
    }

    CB_COMPOUND4args args;
    XdrDecoder d(call.args);
    if (!ff_xdr_decode_cb_compound_args(d.xdr(), &args)) {
        trace("<= CB_COMPOUND with undecodable arguments: GARBAGE_ARGS");
        return RpcCallReply{GARBAGE_ARGS, {}};
    }

    std::vector<nfs_cb_resop4> results;
    nfsstat4 status = NFS4_OK;
    std::string line = "<= CB_COMPOUND:";
    {
        std::lock_guard lock(mu_);
        for (u_int i = 0; i < args.argarray.argarray_len && status == NFS4_OK; ++i) {
            const nfs_cb_argop4& op = args.argarray.argarray_val[i];
            nfs_cb_resop4 res;
            std::memset(&res, 0, sizeof(res));
            res.resop = op.argop;
            if (op.argop == NFS4_OP_CB_SEQUENCE) {
                status =
                    i != 0
                        ? NFS4ERR_SEQUENCE_POS
                        : sequence(op.nfs_cb_argop4_u.opcbsequence,
                                   res.nfs_cb_resop4_u.opcbsequence.CB_SEQUENCE4res_u.csr_resok4);
            } else if (i == 0) {
                status = NFS4ERR_OP_NOT_IN_SESSION;
            } else if (op.argop == NFS4_OP_CB_ILLEGAL) {
                status = NFS4ERR_OP_ILLEGAL;
            } else if (handler_) {
                status = handler_(op, res);
            } else if (op.argop == NFS4_OP_CB_LAYOUTRECALL) {
                status = NFS4ERR_NOMATCHING_LAYOUT;
            } else {
                status = NFS4ERR_NOTSUPP;
            }
            set_status(res, status);
            results.push_back(res);
            line += " " + cb_op_name(op.argop) + " " + status_name(status);
        }
    }

    CB_COMPOUND4res res;
    std::memset(&res, 0, sizeof(res));
    res.status = status;
    res.tag = args.tag;
    res.resarray.resarray_len = static_cast<u_int>(results.size());
    res.resarray.resarray_val = results.data();
    std::optional<RpcCallReply> reply;
    try {
        reply = RpcCallReply{SUCCESS, xdr_encode(1024, "CB_COMPOUND4res", [&](XDR* x) {
                                 return ff_xdr_encode_cb_compound_res(x, &res);
                             })};
    } catch (const XdrError& e) {
        line += std::string(" [") + e.what() + "]";
        reply = RpcCallReply{SYSTEM_ERR, {}};
    }
    ff_xdr_free_cb_compound_args(&args);
    answered_++;
    trace(line);
    return reply;
}

} // namespace flexfiles::client
