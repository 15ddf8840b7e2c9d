// SPDX-License-Identifier: LGPL-3.0-or-later
//
// What the `ceph` scenarios share: a libcephfs client of the harness's CephCluster (to look
// at the namespace behind the MDSs' backs), and a FLEXFILES cluster whose namespace is the
// cluster's CephFS (FLEXFILES over FSAL_CEPH, export "/" at /ff, Mirrors = 2,
// Map_In_Namespace = true, 3 NFSv3 data servers), with as many further MDSs on the same namespace
// and fleet as a scenario asks; the MDSs share their recovery records and grace through
// rados_cluster, node ids "mds1", "mds2", ...
#pragma once

#include "client/flex_file.hpp"
#include "ff_harness/ceph_cluster.hpp"
#include "layout_test_support.hpp"

#include <cephfs/libcephfs.h>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

namespace flexfiles::ceph_test {

using namespace flexfiles::layout_test;
using harness::CephCluster;

// One libcephfs client, mounted at the root of the cluster's file system.
class CephClient {
public:
    explicit CephClient(const CephCluster& c) {
        if (ceph_create(&m_, nullptr) != 0)
            throw std::runtime_error("ceph_create failed");
        if (ceph_conf_read_file(m_, c.conf().c_str()) != 0)
            throw std::runtime_error("ceph_conf_read_file failed");
        if (const int rc = ceph_mount(m_, "/"); rc != 0)
            throw std::runtime_error("ceph_mount: " + std::to_string(rc));
    }
    ~CephClient() {
        ceph_unmount(m_);
        ceph_release(m_);
    }
    CephClient(const CephClient&) = delete;
    CephClient& operator=(const CephClient&) = delete;
    ceph_mount_info* get() const { return m_; }

    // The file's size as CephFS has it, or nullopt when it does not exist.
    std::optional<std::uint64_t> size_of(const std::string& path) const {
        struct ceph_statx stx {};
        if (ceph_statx(m_, path.c_str(), &stx, CEPH_STATX_SIZE, 0) != 0)
            return std::nullopt;
        return stx.stx_size;
    }
    // The value of extended attribute `name`, or nullopt when the file has none.
    std::optional<std::string> xattr(const std::string& path, const std::string& name) const {
        std::string v(4096, '\0');
        const int n = ceph_getxattr(m_, path.c_str(), name.c_str(), v.data(), v.size());
        if (n < 0)
            return std::nullopt;
        v.resize(static_cast<std::size_t>(n));
        return v;
    }

private:
    ceph_mount_info* m_ = nullptr;
};

// OPEN with create and truncate (a new, empty file).
inline client::FlexOpenOptions create_new() {
    client::FlexOpenOptions o;
    o.create = true;
    o.truncate = true;
    return o;
}

// `n` bytes of test pattern `seed`, as the pNFS client writes them.
inline std::vector<char> bytes(std::size_t n, std::uint8_t seed) {
    const auto p = pattern(n, seed);
    return std::vector<char>(p.begin(), p.end());
}

// FlexfilesCluster with its namespace on a CephFS started first.
class CephFlexfilesCluster : public FlexfilesCluster {
protected:
    void SetUp() override {
        ceph_ = std::make_unique<CephCluster>();
        ceph_->add_grace_members({"mds1"});
        start_cluster(spec());
        CephCluster::wait_out_grace(cluster_->mds());
    }
    void TearDown() override {
        more_mds_.clear();
        cluster_.reset();
        ceph_.reset();
    }

    FlexfilesClusterSpec spec() const {
        FlexfilesClusterSpec s;
        s.sub_fsal = CephCluster::fsal_block();
        s.flexfiles_extra = "        Map_In_Namespace = true;\n";
        s.more = [ceph = ceph_.get()](ServerOptions& mds) {
            mds.exports[0].path = "/";
            mds.exports[0].local_path = false;
            ceph->make_cluster_member(mds, "mds1");
        };
        return s;
    }

    // Ceph, then MDS 1 and MDS 2 on its CephFS (node ids "mds1", "mds2"), both out of the
    // grace period MDS 2's start put the cluster in; `adjust` edits spec() first.
    GaneshaServer& start_two_mds(const std::function<void(FlexfilesClusterSpec&)>& adjust = {}) {
        ceph_ = std::make_unique<CephCluster>();
        ceph_->add_grace_members({"mds1", "mds2"});
        FlexfilesClusterSpec s = spec();
        if (adjust)
            adjust(s);
        start_cluster(s);
        const std::size_t before = cluster_->mds().log_offset();
        GaneshaServer& two = start_another_mds("mds2", 2);
        CephCluster::wait_out_grace(two);
        CephCluster::wait_out_grace(cluster_->mds(), before);
        return two;
    }

    // Another MDS exporting the same CephFS over the same data servers, at
    // 127.<slot>.0.<host> (the first is at .1), under its own name, folder and layout store;
    // `name` is also its node id in the cluster's grace database (add_grace_members).
    GaneshaServer& start_another_mds(const std::string& name, unsigned host) {
        ServerOptions o = cluster_->mds().options();
        o.name = name;
        o.address = cluster_->addresses().address(host);
        o.extra_config.clear(); // mds1's cluster blocks
        o.env.clear();
        ceph_->make_cluster_member(o, name);
        more_mds_.push_back(std::make_unique<GaneshaServer>(std::move(o)));
        return *more_mds_.back();
    }

    static std::unique_ptr<Session> session_of(const GaneshaServer& mds) {
        SessionOptions o;
        o.host = mds.address();
        o.port = mds.nfs_port();
        o.minor_version = 2;
        return Session::open(o);
    }

    std::unique_ptr<CephCluster> ceph_;
    std::vector<std::unique_ptr<GaneshaServer>> more_mds_;
};

} // namespace flexfiles::ceph_test
