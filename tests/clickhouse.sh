# A throw-away ClickHouse server for the tests (sourced, after tests/lib.sh): Debian's
# clickhouse-server (18.16) on 127.0.0.1 only, on free ports picked at random, with a data
# directory and a configuration of its own under $TMPDIR, so that it never meets a system
# server (no default port, nothing read from /etc/clickhouse-server, nothing written to
# /var). It is stopped and its directory removed when the test ends, however it ends: an EXIT
# trap, and a watchdog that does it if the test is killed.
#
#   ch_start || { skip "...: $CH_SKIP"; exit 0; }
#       start it and wait until it answers; sets CH_HTTP and CH_TCP (ports), CH_DIR, CH_PID.
#       On failure returns 1 with the reason in CH_SKIP.
#   ch_client ARGS...     clickhouse-client on it (e.g. ch_client -q 'SELECT 1')
#   ch_kill9              kill -9 the server (a crash); ch_restart starts it again, same data
#   ch_stop               stop it and remove its directory (the EXIT trap does it)
#
# Its configuration has a cluster "blk_two_shards": two shards on this same server, whose
# tables live in the databases shard1 and shard2 (each replica's <default_database>), so a
# Distributed table over it really spreads rows over two tables. A user "ro" is read-only.
#
# With CH_TLS=1 before ch_start, it also serves HTTPS on CH_HTTPS, with a certificate for
# 127.0.0.1 and localhost signed by a throw-away CA made for it ($CH_DIR/tls/ca.pem; openssl),
# and has a user "pw" whose password is $CH_PASSWORD. CH_LOG_LEVEL: the server log's level
# (default information; trace logs every request's URI).

CH_SERVER=${CH_SERVER:-/usr/sbin/clickhouse-server}
CH_PID=""
CH_DIR=""
CH_TLS=${CH_TLS:-}
CH_PASSWORD=${CH_PASSWORD:-pw-$$-$RANDOM$RANDOM}

# ch_make_ca DIR NAME: a throw-away CA in DIR/NAME.pem, its key in DIR/NAME.key
ch_make_ca() {
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=blktrace-ng test $2" \
		-keyout "$1/$2.key" -out "$1/$2.pem" >/dev/null 2>&1
}

# The CA, the server's certificate for 127.0.0.1 and localhost, and the DH parameters that
# 18.16 wants in openSSL/server ("-dsaparam": seconds, not minutes)
ch_make_tls() {
	local d="$CH_DIR/tls"
	mkdir -p "$d" &&
		ch_make_ca "$d" ca &&
		openssl req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -keyout "$d/server.key" \
			-out "$d/server.csr" >/dev/null 2>&1 &&
		printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >"$d/ext.cnf" &&
		openssl x509 -req -in "$d/server.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" \
			-CAcreateserial -days 2 -extfile "$d/ext.cnf" -out "$d/server.pem" >/dev/null 2>&1 &&
		openssl dhparam -dsaparam -out "$d/dh.pem" 2048 >/dev/null 2>&1
}

ch_tls_config() {
	[ -n "$CH_TLS" ] || return 0
	cat <<EOF
    <https_port>$CH_HTTPS</https_port>
    <openSSL>
        <server>
            <certificateFile>$CH_DIR/tls/server.pem</certificateFile>
            <privateKeyFile>$CH_DIR/tls/server.key</privateKeyFile>
            <dhParamsFile>$CH_DIR/tls/dh.pem</dhParamsFile>
            <verificationMode>none</verificationMode>
            <loadDefaultCAFile>false</loadDefaultCAFile>
            <cacheSessions>true</cacheSessions>
            <disableProtocols>sslv2,sslv3</disableProtocols>
            <preferServerCiphers>true</preferServerCiphers>
        </server>
    </openSSL>
EOF
}

ch_tls_user() {
	[ -n "$CH_TLS" ] || return 0
	cat <<EOF
        <pw>
            <password>$CH_PASSWORD</password>
            <networks><ip>127.0.0.1</ip></networks>
            <profile>default</profile>
            <quota>default</quota>
        </pw>
EOF
}

ch_client() {
	clickhouse-client --host 127.0.0.1 --port "$CH_TCP" "$@"
}

ch_write_config() {
	cat >"$CH_DIR/config.xml" <<EOF
<?xml version="1.0"?>
<yandex>
    <logger>
        <level>${CH_LOG_LEVEL:-information}</level>
        <log>$CH_DIR/log/server.log</log>
        <errorlog>$CH_DIR/log/error.log</errorlog>
        <size>100M</size>
        <count>1</count>
    </logger>
    <listen_host>127.0.0.1</listen_host>
    <http_port>$CH_HTTP</http_port>
$(ch_tls_config)
    <tcp_port>$CH_TCP</tcp_port>
    <path>$CH_DIR/data/</path>
    <tmp_path>$CH_DIR/tmp/</tmp_path>
    <user_files_path>$CH_DIR/user_files/</user_files_path>
    <format_schema_path>$CH_DIR/format_schemas/</format_schema_path>
    <include_from>$CH_DIR/no-substitutions.xml</include_from>
    <users_config>$CH_DIR/users.xml</users_config>
    <default_profile>default</default_profile>
    <default_database>default</default_database>
    <timezone>UTC</timezone>
    <mark_cache_size>67108864</mark_cache_size>
    <uncompressed_cache_size>67108864</uncompressed_cache_size>
    <max_concurrent_queries>50</max_concurrent_queries>
    <keep_alive_timeout>3</keep_alive_timeout>
    <mlock_executable>false</mlock_executable>
    <remote_servers>
        <blk_two_shards>
            <shard><replica><host>127.0.0.1</host><port>$CH_TCP</port><default_database>shard1</default_database></replica></shard>
            <shard><replica><host>127.0.0.1</host><port>$CH_TCP</port><default_database>shard2</default_database></replica></shard>
        </blk_two_shards>
    </remote_servers>
</yandex>
EOF
	# substitutions come from here, not from /etc/metrika.xml
	echo '<?xml version="1.0"?><yandex></yandex>' >"$CH_DIR/no-substitutions.xml"
	cat >"$CH_DIR/users.xml" <<EOF
<?xml version="1.0"?>
<yandex>
    <profiles>
        <default><max_memory_usage>2000000000</max_memory_usage></default>
        <readonly><readonly>1</readonly></readonly>
    </profiles>
    <users>
        <default>
            <password></password>
            <networks><ip>127.0.0.1</ip></networks>
            <profile>default</profile>
            <quota>default</quota>
        </default>
        <ro>
            <password></password>
            <networks><ip>127.0.0.1</ip></networks>
            <profile>readonly</profile>
            <quota>default</quota>
        </ro>
$(ch_tls_user)
    </users>
    <quotas><default></default></quotas>
</yandex>
EOF
}

# Start the server on the configuration in $CH_DIR and wait (up to 60 s) until it answers.
ch_launch() {
	"$CH_SERVER" --config-file="$CH_DIR/config.xml" >"$CH_DIR/log/stdout" 2>&1 &
	CH_PID=$!
	echo "$CH_PID" >"$CH_DIR/pid"
	local i
	for i in $(seq 1 300); do
		if ! kill -0 "$CH_PID" 2>/dev/null; then
			CH_SKIP="clickhouse-server exited at start: $(grep -h -m1 -E 'Exception|Error' "$CH_DIR/log/error.log" "$CH_DIR/log/stdout" 2>/dev/null | cut -c1-200)"
			CH_PID=""
			return 1
		fi
		ch_client -q 'SELECT 1' >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	CH_SKIP="clickhouse-server did not answer on 127.0.0.1:$CH_TCP within 60 s"
	return 1
}

ch_start() {
	CH_SKIP=""
	if [ ! -x "$CH_SERVER" ] || ! command -v clickhouse-client >/dev/null; then
		CH_SKIP="clickhouse-server and clickhouse-client are not installed (tests/deps.sh installs them)"
		return 1
	fi
	CH_DIR=$(mktemp -d "${TMPDIR:-/tmp}/blk-ch.XXXXXX") || {
		CH_SKIP="cannot make a temporary directory"
		return 1
	}
	mkdir -p "$CH_DIR/log" "$CH_DIR/data" "$CH_DIR/tmp"
	# free ports at once, so that they differ, below the kernel's ephemeral range: a port
	# from bind(0) is one that any outgoing connection may take as its own, and one did take
	# the server's between a kill -9 and its restart in a CI run ("Address already in use")
	read -r CH_HTTP CH_TCP CH_HTTPS < <(python3 -c '
import random, socket
low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
got = []
while len(got) < 3:
    p = random.randrange(10000, max(low, 10002))
    x = socket.socket()
    try:
        x.bind(("127.0.0.1", p))
    except OSError:
        continue
    if p not in [g.getsockname()[1] for g in got]:
        got.append(x)
print(*[x.getsockname()[1] for x in got])')
	if [ -n "$CH_TLS" ] && ! ch_make_tls; then
		CH_SKIP="openssl could not make the test's CA and certificate"
		rm -rf "$CH_DIR"
		return 1
	fi
	ch_write_config
	trap ch_stop EXIT
	trap 'exit 129' HUP
	trap 'exit 130' INT
	trap 'exit 143' TERM
	# the watchdog: if this shell dies without its trap (kill -9), stop the server anyway
	(
		parent=$$
		dir=$CH_DIR
		while kill -0 "$parent" 2>/dev/null && [ -d "$dir" ]; do sleep 1; done
		[ -f "$dir/pid" ] && kill -9 "$(cat "$dir/pid")" 2>/dev/null
		sleep 0.5
		rm -rf "$dir"
	) </dev/null >/dev/null 2>&1 &
	ch_launch || {
		ch_stop
		return 1
	}
}

ch_kill9() {
	[ -n "$CH_PID" ] || return 0
	kill -9 "$CH_PID" 2>/dev/null
	wait "$CH_PID" 2>/dev/null
	CH_PID=""
}

# (the killed server's connections may hold its ports a little: a start that finds them in use
# is tried again, for up to 10 s)
ch_restart() {
	local i
	ch_kill9
	for i in $(seq 1 10); do
		ch_launch && return 0
		case $CH_SKIP in *"Address already in use"*) sleep 1 ;; *) return 1 ;; esac
	done
	return 1
}

ch_stop() {
	if [ -n "$CH_PID" ]; then
		kill "$CH_PID" 2>/dev/null
		local i
		for i in $(seq 1 100); do
			kill -0 "$CH_PID" 2>/dev/null || break
			sleep 0.1
		done
		kill -9 "$CH_PID" 2>/dev/null
		wait "$CH_PID" 2>/dev/null
		CH_PID=""
	fi
	[ -n "$CH_DIR" ] && rm -rf "$CH_DIR"
	CH_DIR=""
}
