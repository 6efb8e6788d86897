/* fleet-ohai.c: bench-only, for bench/fleet-load.c: a node's automatic attributes in the shape
 * of real ohai output (kernel and its modules, CPUs and their flags, network, filesystems, DMI,
 * users, languages, then Debian packages until the node's size), drawn from the node's seed. */
#include "fleet-ohai.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

unsigned long fleet_mix(unsigned long x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdUL;
    x ^= x >> 33;
    x *= 0xc4ceb3fe1a85ec53UL;
    return x ^ (x >> 33);
}

static json_t *ohai_cpu(unsigned long r)
{
    static const char *flags[] = {"fpu",
                                  "vme",
                                  "de",
                                  "pse",
                                  "tsc",
                                  "msr",
                                  "pae",
                                  "mce",
                                  "cx8",
                                  "apic",
                                  "sep",
                                  "mtrr",
                                  "pge",
                                  "mca",
                                  "cmov",
                                  "pat",
                                  "pse36",
                                  "clflush",
                                  "mmx",
                                  "fxsr",
                                  "sse",
                                  "sse2",
                                  "ht",
                                  "syscall",
                                  "nx",
                                  "pdpe1gb",
                                  "rdtscp",
                                  "lm",
                                  "constant_tsc",
                                  "rep_good",
                                  "nopl",
                                  "xtopology",
                                  "cpuid",
                                  "pni",
                                  "pclmulqdq",
                                  "ssse3",
                                  "fma",
                                  "cx16",
                                  "pcid",
                                  "sse4_1",
                                  "sse4_2",
                                  "x2apic",
                                  "movbe",
                                  "popcnt",
                                  "aes",
                                  "xsave",
                                  "avx",
                                  "f16c",
                                  "rdrand",
                                  "hypervisor",
                                  "lahf_lm",
                                  "abm",
                                  "3dnowprefetch",
                                  "bmi1",
                                  "avx2",
                                  "smep",
                                  "bmi2",
                                  "erms",
                                  "invpcid",
                                  "rdseed",
                                  "adx",
                                  "smap",
                                  "clflushopt",
                                  "clwb",
                                  "sha_ni",
                                  "xsaveopt",
                                  "xsavec"};
    int count = 2 << (r % 4);
    json_t *cpu = json_object(), *list = json_array();
    for (size_t i = 0; i < sizeof(flags) / sizeof(*flags); i++)
        json_array_append_new(list, json_string(flags[i]));
    for (int i = 0; i < count; i++) {
        char key[8];
        snprintf(key, sizeof(key), "%d", i);
        json_object_set_new(cpu, key,
                            json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:O}",
                                      "vendor_id", "GenuineIntel", "family", "6", "model", "85",
                                      "model_name", "Intel(R) Xeon(R) Gold 6248R CPU @ 3.00GHz",
                                      "stepping", "7", "mhz", "2999.998", "cache_size", "36608 KB",
                                      "physical_id", "0", "core_id", key, "flags", list));
    }
    json_decref(list);
    json_object_set_new(cpu, "total", json_integer(count));
    json_object_set_new(cpu, "real", json_integer(1));
    json_object_set_new(cpu, "cores", json_integer(count));
    return cpu;
}

static json_t *ohai_network(unsigned long r)
{
    char ip[32], mac[32];
    json_t *ifs = json_object();
    snprintf(ip, sizeof(ip), "10.%lu.%lu.%lu", r % 250, (r >> 8) % 250, (r >> 16) % 250 + 1);
    snprintf(mac, sizeof(mac), "52:54:00:%02lX:%02lX:%02lX", r % 256, (r >> 8) % 256,
             (r >> 16) % 256);
    json_object_set_new(ifs, "lo",
                        json_pack("{s:s, s:s, s:[s,s], s:{s:{s:s, s:s, s:s, s:s}}, s:s}", "mtu",
                                  "65536", "encapsulation", "Loopback", "flags", "LOOPBACK", "UP",
                                  "addresses", "127.0.0.1", "family", "inet", "prefixlen", "8",
                                  "netmask", "255.0.0.0", "scope", "Node", "state", "unknown"));
    json_object_set_new(
        ifs, "eth0",
        json_pack("{s:s, s:s, s:[s,s,s,s], s:{s:{s:s, s:s, s:s, s:s, s:s}, s:{s:s}}, s:s, "
                  "s:[{s:s, s:s, s:s, s:s}], s:{s:s}}",
                  "mtu", "1500", "encapsulation", "Ethernet", "flags", "BROADCAST", "MULTICAST",
                  "UP", "LOWER_UP", "addresses", ip, "family", "inet", "prefixlen", "24", "netmask",
                  "255.255.255.0", "broadcast", "10.0.0.255", "scope", "Global", mac, "family",
                  "lladdr", "state", "up", "routes", "destination", "10.0.0.0/24", "family", "inet",
                  "scope", "link", "proto", "kernel", "arp", "10.0.0.1", "52:54:00:00:00:01"));
    return json_pack("{s:o, s:s, s:s}", "interfaces", ifs, "default_gateway", "10.0.0.1",
                     "default_interface", "eth0");
}

static json_t *ohai_filesystem(unsigned long r)
{
    static const char *mounts[] = {"/",         "/boot",    "/var",     "/tmp",
                                   "/home",     "/run",     "/dev/shm", "/sys/fs/cgroup",
                                   "/run/lock", "/var/log", "/srv",     "/opt"};
    json_t *by_mount = json_object(), *by_device = json_object();
    for (size_t i = 0; i < sizeof(mounts) / sizeof(*mounts); i++) {
        char device[32], kb[32];
        snprintf(device, sizeof(device), "/dev/vda%zu", i + 1);
        snprintf(kb, sizeof(kb), "%lu", 1000000 + fleet_mix(r + i) % 100000000);
        json_object_set_new(by_mount, mounts[i],
                            json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:[s,s,s], s:s, s:[s]}",
                                      "kb_size", kb, "kb_used", "123456", "kb_available", kb,
                                      "percent_used", "12%", "fs_type", "ext4", "uuid",
                                      "0f3a9c4e-1d2b-4c5a-9e8f-7a6b5c4d3e2f", "mount_options", "rw",
                                      "relatime", "errors=remount-ro", "total_inodes", "6553600",
                                      "devices", device));
        json_object_set_new(by_device, device,
                            json_pack("{s:s, s:s, s:s, s:[s]}", "kb_size", kb, "fs_type", "ext4",
                                      "uuid", "0f3a9c4e-1d2b-4c5a-9e8f-7a6b5c4d3e2f", "mounts",
                                      mounts[i]));
    }
    return json_pack("{s:o, s:o}", "by_mountpoint", by_mount, "by_device", by_device);
}

static json_t *ohai_etc(void)
{
    json_t *passwd = json_object(), *group = json_object();
    for (int i = 0; i < 40; i++) {
        char name[32], dir[64];
        snprintf(name, sizeof(name), i ? "svc%02d" : "root", i);
        snprintf(dir, sizeof(dir), i ? "/var/lib/%s" : "/root", name);
        json_object_set_new(passwd, name,
                            json_pack("{s:s, s:i, s:i, s:s, s:s}", "dir", dir, "gid",
                                      i ? 100 + i : 0, "uid", i ? 100 + i : 0, "shell",
                                      "/usr/sbin/nologin", "gecos", name));
        json_object_set_new(group, name,
                            json_pack("{s:i, s:[s]}", "gid", i ? 100 + i : 0, "members", name));
    }
    return json_pack("{s:o, s:o}", "passwd", passwd, "group", group);
}

/* The automatic attributes of node n at its run k: the static parts from the node's seed, the
 * volatile ones (ohai_time, uptime, memory, counters) from k, then Debian-style packages
 * until the JSON reaches the node's size (50 to 150 KB by node). */
json_t *fleet_ohai(const char *name, size_t n, long k, size_t target)
{
    unsigned long r = fleet_mix(n + 1);
    char hostname[64], fqdn[128], text[64];
    json_t *a, *packages, *modules = json_object();
    size_t size;
    char *dumped;

    snprintf(hostname, sizeof(hostname), "%s", name);
    snprintf(fqdn, sizeof(fqdn), "%s.dc1.example.com", hostname);
    for (int i = 0; i < 90; i++) {
        char name[32], bytes[16];
        snprintf(name, sizeof(name), "mod_%lx_%d", fleet_mix(i) % 0xfffff, i);
        snprintf(bytes, sizeof(bytes), "%lu", 4096 + fleet_mix(i) % 900000);
        json_object_set_new(
            modules, name,
            json_pack("{s:s, s:s, s:s}", "size", bytes, "refcount", "1", "version", "6.1.0"));
    }
    a = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "hostname",
                  hostname, "machinename", hostname, "fqdn", fqdn, "domain", "dc1.example.com",
                  "os", "linux", "os_version", "6.1.0-18-amd64", "platform", "debian",
                  "platform_version", "12.5", "platform_family", "debian", "init_package",
                  "systemd", "root_group", "root", "current_user", "root");
    json_object_set_new(a, "kernel",
                        json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:o}", "name", "Linux", "release",
                                  "6.1.0-18-amd64", "version",
                                  "#1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1 (2024-02-01)", "machine",
                                  "x86_64", "processor", "x86_64", "os", "GNU/Linux", "modules",
                                  modules));
    json_object_set_new(a, "cpu", ohai_cpu(r));
    json_object_set_new(a, "network", ohai_network(r));
    json_object_set_new(a, "filesystem", ohai_filesystem(r));
    json_object_set_new(a, "etc", ohai_etc());
    json_object_set_new(a, "dmi",
                        json_pack("{s:{s:s, s:s, s:s}, s:{s:s, s:s, s:s, s:s}, s:{s:s, s:s}}",
                                  "bios", "vendor", "SeaBIOS", "version", "1.16.2-debian-1.16.2-1",
                                  "release_date", "04/01/2014", "system", "manufacturer", "QEMU",
                                  "product_name", "Standard PC (Q35 + ICH9, 2009)", "version",
                                  "pc-q35-8.2", "serial_number", hostname, "chassis", "type",
                                  "Other", "manufacturer", "QEMU"));
    json_object_set_new(a, "languages",
                        json_pack("{s:{s:s, s:s, s:s}, s:{s:s, s:s}, s:{s:s, s:s}}", "ruby",
                                  "version", "3.1.4", "platform", "x86_64-linux", "bin_dir",
                                  "/opt/chef/embedded/bin", "python", "version", "3.11.2",
                                  "builddate", "Mar 13 2023", "perl", "version", "5.36.0",
                                  "archname", "x86_64-linux-gnu-thread-multi"));
    json_object_set_new(
        a, "chef_packages",
        json_pack("{s:{s:s, s:s}, s:{s:s, s:s}}", "chef", "version", "18.5.0", "chef_root",
                  "/opt/chef/embedded/lib/ruby/gems/3.1.0/gems/chef-18.5.0/lib", "ohai", "version",
                  "18.1.11", "ohai_root",
                  "/opt/chef/embedded/lib/ruby/gems/3.1.0/gems/ohai-18.1.11/lib/ohai"));
    /* the volatile part: what changes from one run to the next */
    snprintf(text, sizeof(text), "%lukB", 1000000 + fleet_mix(r + k) % 8000000);
    json_object_set_new(a, "memory",
                        json_pack("{s:s, s:s, s:s, s:s, s:s, s:{s:s, s:s}}", "total", "16384000kB",
                                  "free", text, "available", text, "buffers", "204800kB", "cached",
                                  "4096000kB", "swap", "total", "2097148kB", "free", "2097148kB"));
    json_object_set_new(a, "ohai_time", json_real(1.7e9 + k * 1800.0 + (double)(n % 1800)));
    json_object_set_new(a, "uptime_seconds", json_integer(86400 + k * 1800));
    snprintf(text, sizeof(text), "10.%lu.%lu.%lu", r % 250, (r >> 8) % 250, (r >> 16) % 250 + 1);
    json_object_set_new(a, "ipaddress", json_string(text));
    dumped = json_dumps(a, JSON_COMPACT);
    size = strlen(dumped);
    free(dumped);
    packages = json_object();
    for (int i = 0; size < target; i++) {
        char name[64], version[48];
        snprintf(name, sizeof(name), "lib%lx-%s%d", fleet_mix(r ^ (unsigned long)i) % 0xffffff,
                 i % 3 ? "common" : "dev", i % 7);
        snprintf(version, sizeof(version), "%d.%d.%lu-%d+deb12u%d", i % 9, i % 31,
                 fleet_mix(i) % 100, 1 + i % 4, i % 3);
        json_object_set_new(packages, name,
                            json_pack("{s:s, s:s}", "version", version, "arch", "amd64"));
        size += strlen(name) + strlen(version) + 30;
    }
    json_object_set_new(a, "packages", packages);
    return a;
}
