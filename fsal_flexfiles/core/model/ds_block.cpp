// SPDX-License-Identifier: LGPL-3.0-or-later
#include "model/ds_block.hpp"

#include <cctype>
#include <charconv>
#include <limits>
#include <optional>
#include <set>
#include <strings.h>
#include <vector>

namespace flexfiles::mgmt {
namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
        s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
        s.remove_suffix(1);
    return s;
}

bool iequals(std::string_view a, std::string_view b) {
    return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0;
}

// Drops an optional `Data_Server {` ... `}` around the pairs.
std::variant<std::string_view, std::string> unwrap(std::string_view text) {
    std::string_view body = trim(text);
    constexpr std::string_view kBlock = "Data_Server";
    if (body.size() >= kBlock.size() && iequals(body.substr(0, kBlock.size()), kBlock)) {
        std::string_view rest = trim(body.substr(kBlock.size()));
        if (rest.empty() || rest.front() != '{')
            return std::string("expected '{' after Data_Server");
        if (rest.back() != '}')
            return std::string("the Data_Server block has no closing '}'");
        return trim(rest.substr(1, rest.size() - 2));
    }
    if (!body.empty() && body.front() == '{') {
        if (body.back() != '}')
            return std::string("the block has no closing '}'");
        return trim(body.substr(1, body.size() - 2));
    }
    return body;
}

// Splits on ';' and new lines outside double quotes.
std::variant<std::vector<std::string_view>, std::string> split_pairs(std::string_view body) {
    std::vector<std::string_view> out;
    bool quoted = false;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= body.size(); ++i) {
        const bool end = i == body.size();
        if (!end && body[i] == '"') {
            quoted = !quoted;
            continue;
        }
        if (end || (!quoted && (body[i] == ';' || body[i] == '\n'))) {
            std::string_view item = trim(body.substr(start, i - start));
            if (!item.empty())
                out.push_back(item);
            start = i + 1;
        }
    }
    if (quoted)
        return std::string("a quoted value has no closing '\"'");
    return out;
}

template <class T>
std::optional<std::string> parse_number(std::string_view key, std::string_view value, T& out) {
    std::uint64_t v = 0;
    const char* end = value.data() + value.size();
    auto [p, ec] = std::from_chars(value.data(), end, v);
    if (value.empty() || ec != std::errc() || p != end)
        return std::string(key) + " = \"" + std::string(value) + "\" is not a number";
    if (v > std::numeric_limits<T>::max())
        return std::string(key) + " = " + std::string(value) + " is out of range (0.." +
               std::to_string(std::numeric_limits<T>::max()) + ")";
    out = static_cast<T>(v);
    return std::nullopt;
}

} // namespace

std::variant<config::DataServer, std::string> parse_data_server_block(std::string_view text) {
    auto unwrapped = unwrap(text);
    if (auto* err = std::get_if<std::string>(&unwrapped))
        return *err;
    auto pairs = split_pairs(std::get<std::string_view>(unwrapped));
    if (auto* err = std::get_if<std::string>(&pairs))
        return *err;
    const auto& items = std::get<std::vector<std::string_view>>(pairs);
    if (items.empty())
        return std::string("the block is empty (it needs at least Id, Address and Export_Path)");

    config::DataServer ds; // the configuration file's defaults
    std::set<std::string> seen;
    for (std::string_view item : items) {
        const std::size_t eq = item.find('=');
        if (eq == std::string_view::npos)
            return "\"" + std::string(item) + "\" is not a Key = Value pair";
        const std::string_view key = trim(item.substr(0, eq));
        std::string_view value = trim(item.substr(eq + 1));
        if (key.empty())
            return "\"" + std::string(item) + "\" has no key";
        if (value.size() >= 2 && value.front() == '"' && value.back() == '"')
            value = value.substr(1, value.size() - 2);
        else if (value.find('"') != std::string_view::npos)
            return std::string(key) + ": misplaced '\"' in the value";

        std::string lower(key);
        for (char& c : lower)
            c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (!seen.insert(lower).second)
            return std::string(key) + " is given twice";

        std::optional<std::string> err;
        if (lower == "id")
            err = parse_number(key, value, ds.id);
        else if (lower == "address")
            ds.address = std::string(value);
        else if (lower == "nfs_port")
            err = parse_number(key, value, ds.nfs_port);
        else if (lower == "mnt_port")
            err = parse_number(key, value, ds.mnt_port);
        else if (lower == "export_path")
            ds.export_path = std::string(value);
        else if (lower == "rsize")
            err = parse_number(key, value, ds.rsize);
        else if (lower == "wsize")
            err = parse_number(key, value, ds.wsize);
        else
            err = "unknown key " + std::string(key) +
                  " (a Data_Server block has Id, Address, NFS_Port, MNT_Port, Export_Path, "
                  "Rsize, Wsize)";
        if (err)
            return *err;
    }
    return ds;
}

} // namespace flexfiles::mgmt
