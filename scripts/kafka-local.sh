#!/usr/bin/env bash
# kafka-local.sh — real Apache Kafka 4.x clusters on 127.0.0.1 for kmirror's tests, demo and benchmarks.
#
# Jars come from Maven Central through kafka/pom.xml. Each cluster is one JVM in KRaft combined mode
# (broker + controller, single voter), so clusters are fully independent. Every command is idempotent.
# Older releases (compatibility tests) come through kafka/legacy/pom.xml into kafka/lib-VERSION: 3.3 and later
# run in KRaft combined mode too; older ones in ZooKeeper mode, with their own ZooKeeper JVM on PORT+1.
#
#   kafka-local.sh fetch [VERSION]                jars into kafka/lib, or kafka/lib-VERSION for another release
#                                                 (skipped when already complete)
#   kafka-local.sh up NAME PORT [plain|sasl|auth] [VERSION]
#                                                 format if new, start if stopped, wait until ready (broker on
#                                                 PORT, controller or ZooKeeper on PORT+1; auth: see auth_listeners;
#                                                 VERSION 4.1.1, or e.g. 3.9.1, 3.6.2, 2.8.2 (ZooKeeper mode), 2.1.1)
#   kafka-local.sh up-multi NAME PORT [NODES]     a KRaft cluster of NODES (default 3) combined broker+controller
#                                                 nodes NAME-1..NAME-N, all voters (one may die and the quorum
#                                                 stays), node i's broker on PORT+2(i-1), its controller one above;
#                                                 internal topics with replication factor 3; Kafka 4.1.1, plain.
#                                                 Starts the nodes that are not running (a node killed with
#                                                 `kill NAME-i` comes back on its data) and waits until all serve.
#   kafka-local.sh down NAME... | --all           SIGTERM, SIGKILL after 15 s
#   kafka-local.sh kill NAME                      SIGKILL at once (crash drills)
#   kafka-local.sh wipe NAME... | --all           stop and delete the cluster's data
#   kafka-local.sh status                         one line per known cluster
#   kafka-local.sh mm2 NAME PROPS [--version VERSION] [--clusters X]
#                                                 real MirrorMaker 2 (dedicated mode) in the background; VERSION
#                                                 4.1.1, or an older MM2 (2.4 on, e.g. 3.9.1) in kafka/lib-mm2-VERSION
#   kafka-local.sh mm2-down NAME                  SIGTERM, SIGKILL after 15 s
#   kafka-local.sh tool CLASS|ALIAS ARGS...       a Kafka CLI tool in the foreground
#
# Environment: KMIRROR_STATE (default <repo>/.state) holds kafka/<name>/ and every log in logs/;
# BROKER_HEAP (4.1.1), MULTI_HEAP (each node of up-multi), LEGACY_HEAP (other releases), ZOOKEEPER_HEAP, MM2_HEAP: JVM heap flags.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
DEFAULT_VERSION=4.1.1
LIB="$ROOT/kafka/lib"   # the jars of the version being run: version_profile sets it
STATE="${KMIRROR_STATE:-$ROOT/.state}"
CLUSTERS="$STATE/kafka"
LOGS="$STATE/logs"
JAVA="${JAVA_HOME:+$JAVA_HOME/bin/}java"
BROKER_HEAP="${BROKER_HEAP:--Xms512m -Xmx512m}"
MM2_HEAP="${MM2_HEAP:--Xms256m -Xmx1g}"
# Brokers of older versions only serve the compatibility tests: small heaps (see docs/compatibility.md).
LEGACY_HEAP="${LEGACY_HEAP:--Xms256m -Xmx256m}"
ZOOKEEPER_HEAP="${ZOOKEEPER_HEAP:--Xms32m -Xmx64m}"
# Each node of a multi-node cluster (up-multi): three JVMs serve a few small test topics.
MULTI_HEAP="${MULTI_HEAP:--Xms256m -Xmx256m}"
# The flags of bin/kafka-run-class.sh without JMX and GC logging.
PERF_OPTS="-server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent -Djava.awt.headless=true"
# Only for short-lived admin JVMs (storage format): C1 and serial GC start faster. Never for measured runs.
QUICK_OPTS="-Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
SASL_ADMIN_USER="${SASL_ADMIN_USER:-admin}"
SASL_ADMIN_PASS="${SASL_ADMIN_PASS:-admin-secret}"

die() { echo "kafka-local: $*" >&2; exit 1; }
# Brokers and ZooKeeper run in a session of their own: they outlive whoever started them (a test run's
# process group, which scripts/run-tests.ts stops as a whole when it is interrupted). MM2 stays in the
# caller's group. setsid execs in place here (a background job is no group leader), so $! is the JVM's pid.
DETACH=""; command -v setsid >/dev/null 2>&1 && DETACH=setsid

# ── versions ─────────────────────────────────────────────────────────────────────────────────────────
# Everything that differs between Kafka releases lives here: where the jars go and which POM fetches them, the
# logging binding (and so the logging flag), and whether the cluster runs in KRaft or ZooKeeper mode.
V_VERSION=$DEFAULT_VERSION V_POM= V_MVN_ARGS= V_LOGGING=log4j2 V_PROCESS=kraft
V_MARK='kafka_2.1[23]-*.jar'   # a jar that only a complete lib dir of this kind holds

version_profile() { # VERSION - sets LIB and V_*
  local v=$1
  [[ "$v" =~ ^([0-9]+)\.([0-9]+)\.[0-9]+$ ]] || die "version '$v' is not a Kafka release like 3.9.1"
  local major=${BASH_REMATCH[1]} minor=${BASH_REMATCH[2]}
  V_VERSION=$v
  if [ "$major" -ge 4 ]; then
    V_POM="$ROOT/kafka/pom.xml" V_LOGGING=log4j2 V_PROCESS=kraft
    if [ "$v" = "$DEFAULT_VERSION" ]; then LIB="$ROOT/kafka/lib" V_MVN_ARGS=""
    else LIB="$ROOT/kafka/lib-$v" V_MVN_ARGS="-Dkafka.version=$v -Dkafka.lib.dir=$ROOT/kafka/lib-$v"; fi
    return 0
  fi
  [ "$major" -ge 2 ] || die "Kafka $v: only 2.0 and later can be run here"
  V_POM="$ROOT/kafka/legacy/pom.xml" LIB="$ROOT/kafka/lib-$v"
  V_MVN_ARGS="-Dkafka.version=$v -Dkafka.lib.dir=$LIB"
  local release=$((major * 100 + minor))
  # gradle/dependencies.gradle of each release: reload4j from 3.2 on, log4j 1.2.17 before.
  if [ "$release" -ge 302 ]; then V_MVN_ARGS+=" -Dlog.binding=reload4j -Dslf4j.version=1.7.36"
  else V_MVN_ARGS+=" -Dlog.binding=log4j12 -Dslf4j.version=1.7.30"; fi
  # kafka_2.13 exists from 2.4 on.
  if [ "$release" -ge 204 ]; then V_MVN_ARGS+=" -Dscala.binary=2.13"; else V_MVN_ARGS+=" -Dscala.binary=2.12"; fi
  # The ZooKeeper client of 3.4 and of 3.5 before 3.5.8 cannot connect on Java 14+ (ZOOKEEPER-3779); Kafka 2.8
  # brings 3.5.9, which older brokers run with as well (kafka/legacy/pom.xml).
  [ "$release" -ge 208 ] || V_MVN_ARGS+=" -Dzookeeper.version=3.5.9"
  V_LOGGING=log4j1
  # KRaft is production-ready from 3.3; earlier releases run with ZooKeeper.
  if [ "$release" -ge 303 ]; then V_PROCESS=kraft; else V_PROCESS=zookeeper; fi
}

lib_complete() { [ -f "$LIB/.complete" ] && compgen -G "$LIB/$V_MARK" >/dev/null; }

cmd_fetch() { # [VERSION]
  version_profile "${1:-$DEFAULT_VERSION}"
  maven_fetch "Kafka $V_VERSION"
}

maven_fetch() { # WHAT - the runtime jars of V_POM (with V_MVN_ARGS) into LIB, unless it is complete already
  lib_complete && return 0
  command -v mvn >/dev/null || die "Maven (mvn) is needed to fetch the Kafka jars: apt-get install maven"
  # One fetch at a time (clusters of several versions start in parallel and share ~/.m2); the lock's file
  # descriptor lives only in this subshell, so no broker started afterwards holds it.
  (
    if command -v flock >/dev/null; then flock -w 900 9 || exit 1; fi
    lib_complete && exit 0   # fetched meanwhile by whoever held the lock
    rm -rf "$LIB"   # two Kafka versions on one wildcard classpath break in odd ways
    # shellcheck disable=SC2086
    cd "$(dirname "$V_POM")" && mvn -B -q -f "$V_POM" $V_MVN_ARGS package || exit 1
    touch "$LIB/.complete"
    echo "kafka-local: $(ls "$LIB" | grep -c '\.jar$') jars of $1 in $LIB"
  ) 9>"$ROOT/kafka/.fetch.lock" || die "mvn package failed for $1 ($V_POM)"
}

log_flag() { # LEVEL(info|warn) - the JVM flag that points this version's logging binding at our config
  if [ "$V_LOGGING" = log4j2 ]; then echo "-Dlog4j2.configurationFile=$STATE/log4j2-$1.properties"
  else echo "-Dlog4j.configuration=file:$STATE/log4j-$1.properties"; fi
}

write_log4j() { # FILE LEVEL
  cat >"$1" <<L4J
status = warn
appender.main.type = Console
appender.main.name = MAIN
appender.main.target = SYSTEM_OUT
appender.main.layout.type = PatternLayout
appender.main.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = $2
rootLogger.appenderRef.main.ref = MAIN
logger.cfg.name = org.apache.kafka.common.config.AbstractConfig
logger.cfg.level = warn
logger.req.name = kafka.request.logger
logger.req.level = warn
# readiness markers this script waits for
logger.raft.name = kafka.server.KafkaRaftServer
logger.raft.level = info
logger.mm2.name = org.apache.kafka.connect.mirror.MirrorMaker
logger.mm2.level = info
L4J
}

write_log4j1() { # FILE LEVEL - log4j 1.x properties, read by log4j 1.2.17 and reload4j (Kafka before 4.0)
  cat >"$1" <<L4J
log4j.rootLogger=$2, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.org.apache.kafka.common.config.AbstractConfig=WARN
log4j.logger.kafka.request.logger=WARN
log4j.logger.kafka.server.KafkaRaftServer=INFO
log4j.logger.kafka.server.KafkaServer=INFO
log4j.logger.org.apache.zookeeper.server.NIOServerCnxnFactory=INFO
L4J
}

ensure_dirs() {
  mkdir -p "$CLUSTERS" "$LOGS"
  [ -f "$STATE/log4j2-info.properties" ] || write_log4j "$STATE/log4j2-info.properties" info
  [ -f "$STATE/log4j2-warn.properties" ] || write_log4j "$STATE/log4j2-warn.properties" warn
  [ -f "$STATE/log4j-info.properties" ] || write_log4j1 "$STATE/log4j-info.properties" INFO
  [ -f "$STATE/log4j-warn.properties" ] || write_log4j1 "$STATE/log4j-warn.properties" WARN
}

new_cluster_id() { # 16 random bytes, base64url without padding, never starting with '-' (org.apache.kafka.common.Uuid)
  local id
  while :; do
    id=$(head -c16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')
    [ "${id:0:1}" != "-" ] && break
  done
  echo "$id"
}

server_properties() { # DIR PORT MODE
  local dir=$1 port=$2 cport=$(($2 + 1)) mode=$3
  cat <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$cport
controller.listener.names=CONTROLLER
log.dirs=$dir/data
num.partitions=1
default.replication.factor=1
auto.create.topics.enable=false
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
share.coordinator.state.topic.num.partitions=1
group.initial.rebalance.delay.ms=0
log.cleaner.dedupe.buffer.size=2097152
num.network.threads=2
num.io.threads=4
background.threads=4
num.recovery.threads.per.data.dir=1
PROPS
  if [ "$mode" = auth ]; then
    auth_server_properties "$dir" "$port"
  elif [ "$mode" = sasl ]; then
    local jaas="org.apache.kafka.common.security.plain.PlainLoginModule required username=\"$SASL_ADMIN_USER\" password=\"$SASL_ADMIN_PASS\" user_$SASL_ADMIN_USER=\"$SASL_ADMIN_PASS\""
    # Super user "quoted", password q"uo\te d%2F/pw: escaped for JAAS (\" \\), then for the .properties file.
    local quoted='user_quoted="q\\\"uo\\\\te d%2F/pw"'
    cat <<PROPS
listeners=SASL_PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport
advertised.listeners=SASL_PLAINTEXT://127.0.0.1:$port
inter.broker.listener.name=SASL_PLAINTEXT
listener.security.protocol.map=SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:SASL_PLAINTEXT
sasl.enabled.mechanisms=PLAIN
sasl.mechanism.inter.broker.protocol=PLAIN
sasl.mechanism.controller.protocol=PLAIN
listener.name.sasl_plaintext.plain.sasl.jaas.config=$jaas user_alice="alice-secret" user_bob="bob-secret" $quoted;
listener.name.controller.plain.sasl.jaas.config=$jaas;
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
super.users=User:$SASL_ADMIN_USER;User:quoted
allow.everyone.if.no.acl.found=false
PROPS
  else
    cat <<PROPS
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport
advertised.listeners=PLAINTEXT://127.0.0.1:$port
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
PROPS
  fi
}

# ---- mode "auth": one broker, every client authentication kmirror supports, each on its own listener ----
# Test-only secrets: they protect nothing but these local test clusters.
AUTH_SASL_USER=alice
AUTH_PLAIN_PASS=alice-plain-secret
AUTH_SCRAM256_PASS=alice-scram256-secret
AUTH_SCRAM512_PASS=alice-scram512-secret
AUTH_BROKER_STORE_PASS=broker-secret
AUTH_CLIENT_STORE_PASS=client-store-secret
AUTH_CLIENT_KEY_PASS=client-key-secret
AUTH_TRUST_STORE_PASS=trust-secret
AUTH_SCRAM_ARGS=(--add-scram "SCRAM-SHA-256=[name=$AUTH_SASL_USER,password=$AUTH_SCRAM256_PASS]"
                 --add-scram "SCRAM-SHA-512=[name=$AUTH_SASL_USER,password=$AUTH_SCRAM512_PASS]")

auth_listeners() { # PORT: name protocol port [advertised port], one per line (test/helpers/clusters.ts AUTH_LISTENERS mirrors this)
  local p=$1
  # PROXIED advertises the port of a test's TCP proxy in front of it (test/helpers/answer-cutting-proxy.ts), so
  # clients that bootstrap through the proxy keep using it; nothing listens there unless a test runs the proxy.
  printf '%s\n' "PLAINTEXT PLAINTEXT $p" "SASLPLAIN SASL_PLAINTEXT $((p + 2))" "SASLSSL SASL_SSL $((p + 3))" \
    "MTLS SSL $((p + 4))" "OAUTH SASL_PLAINTEXT $((p + 5))" "OAUTHUNSECURED SASL_PLAINTEXT $((p + 6))" \
    "PROXIED PLAINTEXT $((p + 7)) $((p + 8))"
}

auth_server_properties() { # DIR PORT
  local dir=$1 port=$2 certs="$1/certs" name proto p adv listeners="" advertised="" map="CONTROLLER:PLAINTEXT"
  while read -r name proto p adv; do
    listeners+="$name://127.0.0.1:$p,"; advertised+="$name://127.0.0.1:${adv:-$p},"; map+=",$name:$proto"
  done < <(auth_listeners "$port")
  local plain="org.apache.kafka.common.security.plain.PlainLoginModule required user_$AUTH_SASL_USER=\"$AUTH_PLAIN_PASS\";"
  local scram="org.apache.kafka.common.security.scram.ScramLoginModule required;"
  local oauth="org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;"
  cat <<PROPS
listeners=${listeners}CONTROLLER://127.0.0.1:$((port + 1))
advertised.listeners=${advertised%,}
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=$map
ssl.keystore.type=PKCS12
ssl.keystore.location=$certs/broker.p12
ssl.keystore.password=$AUTH_BROKER_STORE_PASS
ssl.key.password=$AUTH_BROKER_STORE_PASS
ssl.truststore.type=PEM
ssl.truststore.location=$certs/ca.pem
listener.name.mtls.ssl.client.auth=required
sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512
PROPS
  for name in saslplain saslssl; do
    cat <<PROPS
listener.name.$name.plain.sasl.jaas.config=$plain
listener.name.$name.scram-sha-256.sasl.jaas.config=$scram
listener.name.$name.scram-sha-512.sasl.jaas.config=$scram
PROPS
  done
  # OAUTH validates signed JWTs against a JWKS file (tests sign tokens with certs/jwt-signing-key.pem); a session
  # lasts until the token expires, so clients re-authenticate with a fresh token. OAUTHUNSECURED takes Java's
  # unsecured (alg "none") tokens with the default validator.
  cat <<PROPS
listener.name.oauth.sasl.enabled.mechanisms=OAUTHBEARER
listener.name.oauth.oauthbearer.sasl.jaas.config=$oauth
listener.name.oauth.oauthbearer.sasl.server.callback.handler.class=org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler
listener.name.oauth.oauthbearer.connections.max.reauth.ms=600000
sasl.oauthbearer.jwks.endpoint.url=$(auth_jwks_url "$dir")
listener.name.oauthunsecured.sasl.enabled.mechanisms=OAUTHBEARER
listener.name.oauthunsecured.oauthbearer.sasl.jaas.config=$oauth
PROPS
}

auth_jwks_url() { echo "file://$1/certs/jwks.json"; }

mode_jvm_opts() { # MODE DIR: extra broker JVM options of a mode
  # Kafka 4.x reads JWKS (even file:) URLs only when the JVM property lists them.
  [ "$1" = auth ] && echo "-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls=$(auth_jwks_url "$2")"
  return 0
}

node_bin() { if [ -x "$ROOT/node_modules/.bin/node" ]; then echo "$ROOT/node_modules/.bin/node"; else echo node; fi; }

auth_init() { # DIR NAME: a CA, the broker's and a client's certificates, client stores of every type, a JWT key
  local certs="$1/certs" log="$LOGS/$2-certs.log"
  mkdir -p "$certs"
  ( set -e; cd "$certs"
    local ext="basicConstraints=critical,CA:FALSE"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 3650 -subj /CN=kmirror-test-ca \
      -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
    openssl req -newkey rsa:2048 -nodes -keyout broker.key -out broker.csr -subj /CN=localhost
    printf '%s\n' "$ext" "subjectAltName=IP:127.0.0.1,DNS:localhost" "extendedKeyUsage=serverAuth,clientAuth" >broker.ext
    openssl x509 -req -in broker.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 3650 -extfile broker.ext -out broker.pem
    openssl pkcs12 -export -in broker.pem -inkey broker.key -certfile ca.pem -name broker -out broker.p12 -passout "pass:$AUTH_BROKER_STORE_PASS"
    openssl req -newkey rsa:2048 -nodes -keyout client-key.pem -out client.csr -subj /CN=kmirror-client/OU=test
    printf '%s\n' "$ext" "extendedKeyUsage=clientAuth" >client.ext
    openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 3650 -extfile client.ext -out client.pem
    cat client.pem ca.pem >client-chain.pem
    openssl pkcs8 -topk8 -in client-key.pem -out client-key-encrypted.pem -v2 aes-256-cbc -passout "pass:$AUTH_CLIENT_KEY_PASS"
    cat client-key.pem client-chain.pem >client-keystore.pem
    cat client-key-encrypted.pem client-chain.pem >client-keystore-encrypted.pem
    openssl pkcs12 -export -in client.pem -inkey client-key.pem -certfile ca.pem -name client -out client.p12 -passout "pass:$AUTH_CLIENT_STORE_PASS"
    keytool -importkeystore -noprompt -srckeystore client.p12 -srcstoretype PKCS12 -srcstorepass "$AUTH_CLIENT_STORE_PASS" \
      -srcalias client -destkeystore client.jks -deststoretype JKS -deststorepass "$AUTH_CLIENT_STORE_PASS" \
      -destalias client -destkeypass "$AUTH_CLIENT_KEY_PASS"
    for type in JKS PKCS12; do
      keytool -importcert -noprompt -alias kmirror-test-ca -file ca.pem -keystore "truststore.${type,,}" -storetype "$type" \
        -storepass "$AUTH_TRUST_STORE_PASS"
    done
    mv truststore.pkcs12 truststore.p12
    openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out jwt-signing-key.pem
    "$(node_bin)" -e 'const c = require("node:crypto"), fs = require("node:fs");
      const jwk = { ...c.createPublicKey(fs.readFileSync(process.argv[1])).export({ format: "jwk" }), kid: "kmirror-test", alg: "RS256", use: "sig" };
      fs.writeFileSync(process.argv[2], JSON.stringify({ keys: [jwk] }))' jwt-signing-key.pem jwks.json
    rm -f ./*.csr ./*.ext ./*.srl
  ) >"$log" 2>&1 || { cat "$log" >&2; die "certificate generation failed for cluster $2 (log: $log)"; }
}

# A pid file's process is ours only while it runs AND its command line names the pid file's directory: pids are
# reused (pid_max is 32768 here and a test run spawns thousands of processes), so a pid file left by a process that
# died on its own may name an unrelated one, which must be neither taken for the broker nor signalled.
pid_is_ours() { # PIDFILE PID
  kill -0 "$2" 2>/dev/null && ps -ww -o args= -p "$2" 2>/dev/null | grep -qF -- "$(dirname "$1")/"
}

is_running() { local f="$CLUSTERS/$1/pid"; [ -f "$f" ] && pid_is_ours "$f" "$(cat "$f")"; }

cmd_init() { # NAME PORT MODE — only when the cluster has never been formatted (or was wiped)
  local name=$1 port=$2 mode=$3 dir="$CLUSTERS/$1"
  mkdir -p "$dir/data"
  server_properties "$dir" "$port" "$mode" >"$dir/server.properties"
  echo "bootstrap.servers=127.0.0.1:$port" >"$dir/client.properties"
  if [ "$mode" = sasl ]; then
    cat >>"$dir/client.properties" <<PROPS
security.protocol=SASL_PLAINTEXT
sasl.mechanism=PLAIN
sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="$SASL_ADMIN_USER" password="$SASL_ADMIN_PASS";
PROPS
  fi
  echo "$port $mode" >"$dir/spec"
  echo "$V_VERSION" >"$dir/version"
  if [ "$V_PROCESS" = zookeeper ]; then zookeeper_mode_init "$dir" "$port"; return 0; fi
  local id format_args=(); id=$(new_cluster_id)
  if [ "$mode" = auth ]; then auth_init "$dir" "$name"; format_args=("${AUTH_SCRAM_ARGS[@]}"); fi
  # shellcheck disable=SC2086
  "$JAVA" $QUICK_OPTS "$(log_flag warn)" -cp "$LIB/*" \
    kafka.tools.StorageTool format --cluster-id "$id" --config "$dir/server.properties" "${format_args[@]}" >"$LOGS/$name-format.log" 2>&1 \
    || { cat "$LOGS/$name-format.log" >&2; die "storage format failed for cluster $name"; }
  echo "$id" >"$dir/cluster.id"
}

wait_for_line() { # FILE TEXT PID TIMEOUT_S WHAT
  local deadline=$((SECONDS + $4))
  until grep -qF "$2" "$1" 2>/dev/null; do
    kill -0 "$3" 2>/dev/null || { tail -n 40 "$1" >&2; die "$5 exited before it was ready (log: $1)"; }
    [ "$SECONDS" -lt "$deadline" ] || { tail -n 40 "$1" >&2; die "$5 not ready after $4 s (log: $1)"; }
    sleep 0.2
  done
}

cmd_up() { # NAME PORT [plain|sasl|auth] [VERSION]
  [ $# -ge 2 ] || die "usage: up NAME PORT [plain|sasl|auth] [VERSION]"
  local name=$1 port=$2 mode=${3:-plain} version=${4:-$DEFAULT_VERSION} dir="$CLUSTERS/$1"
  [[ "$mode" == plain || "$mode" == sasl || "$mode" == auth ]] || die "mode must be plain, sasl or auth, not '$mode'"
  version_profile "$version"
  [ "$V_PROCESS" = kraft ] || [ "$mode" = plain ] || die "Kafka $version runs in ZooKeeper mode here, which is plain only (not $mode)"
  if is_running "$name"; then
    read -r oldport oldmode <"$dir/spec"
    [ "$oldport $oldmode" = "$port $mode" ] || die "cluster $name runs on $oldport ($oldmode), not $port ($mode): down it first"
    [ "$(cluster_version "$name")" = "$version" ] || die "cluster $name runs Kafka $(cluster_version "$name"), not $version: down it first"
    echo "$name: already running (pid $(cat "$dir/pid"), 127.0.0.1:$port, $mode, Kafka $version)"
    return 0
  fi
  cmd_fetch "$version"; ensure_dirs
  if [ -f "$dir/spec" ]; then
    read -r oldport oldmode <"$dir/spec"
    [ "$oldport $oldmode" = "$port $mode" ] && [ "$(cluster_version "$name")" = "$version" ] || { rm -rf "$dir"; cmd_init "$name" "$port" "$mode"; }
  else
    cmd_init "$name" "$port" "$mode"
  fi
  local t0=$SECONDS
  start_cluster "$name" "$dir" "$mode"
  echo "$name: started pid $(cat "$dir/pid") on 127.0.0.1:$port ($mode, Kafka $version) in $((SECONDS - t0)) s"
}

cluster_version() { cat "$CLUSTERS/$1/version" 2>/dev/null || echo "$DEFAULT_VERSION"; }

start_cluster() { # NAME DIR MODE - the broker JVM (after its ZooKeeper in ZooKeeper mode), then wait until it is ready
  local name=$1 dir=$2 mode=$3 log="$LOGS/$1.log" heap=$BROKER_HEAP ready="Kafka Server started"
  [ "$V_VERSION" = "$DEFAULT_VERSION" ] || heap=$LEGACY_HEAP
  if [ "$V_PROCESS" = zookeeper ]; then
    start_zookeeper "$name" "$dir"
    # KafkaServer (ZooKeeper mode) logs "[KafkaServer id=0] started" once its socket server accepts requests.
    ready="started (kafka.server.KafkaServer)"
  fi
  : >"$log"
  # shellcheck disable=SC2086
  nohup $DETACH "$JAVA" $heap $PERF_OPTS $(mode_jvm_opts "$mode" "$dir") -Dkafka.logs.dir="$LOGS" "$(log_flag info)" \
    -cp "$LIB/*" kafka.Kafka "$dir/server.properties" >>"$log" 2>&1 </dev/null &
  echo $! >"$dir/pid"
  # "Kafka Server started" is logged only after the broker caught up with metadata and was unfenced.
  wait_for_line "$log" "$ready" "$(cat "$dir/pid")" "${KAFKA_START_TIMEOUT:-120}" "cluster $name"
}

# ── multi-node clusters (up-multi) ──────────────────────────────────────────────────────────────────
# NAME-1..NAME-N are clusters of this script in their own right (down, kill, status work per node), formatted
# with one cluster id and the same static voter set. Every node is a voter, so killing one leaves a majority:
# the controller fences the dead broker within broker.session.timeout.ms and moves its partition leaders (the
# group and transaction coordinators with them) to the replicas that stay.

multi_voters() { # PORT NODES
  local voters="" i
  for i in $(seq 1 "$2"); do voters+="$i@127.0.0.1:$(($1 + 2 * (i - 1) + 1)),"; done
  echo "${voters%,}"
}

multi_properties() { # DIR PORT NODE VOTERS
  server_properties "$1" "$2" plain | grep -vE '^(node\.id|controller\.quorum\.voters|default\.replication\.factor|offsets\.topic\.replication\.factor|transaction\.state\.log\.(replication\.factor|min\.isr)|share\.coordinator\.state\.topic\.(replication\.factor|min\.isr))='
  cat <<PROPS
node.id=$3
controller.quorum.voters=$4
default.replication.factor=3
min.insync.replicas=1
offsets.topic.replication.factor=3
transaction.state.log.replication.factor=3
transaction.state.log.min.isr=2
share.coordinator.state.topic.replication.factor=3
share.coordinator.state.topic.min.isr=2
broker.heartbeat.interval.ms=500
broker.session.timeout.ms=3000
replica.lag.time.max.ms=5000
# Leaders stay where a kill or restart put them: tests find a coordinator, then kill or freeze it; a preferred-leader
# election every 300 s (the default) could move it in between.
auto.leader.rebalance.enable=false
PROPS
}

cmd_up_multi() { # NAME PORT [NODES]
  [ $# -ge 2 ] || die "usage: up-multi NAME PORT [NODES]"
  local name=$1 port=$2 nodes=${3:-3} i dir id="" pending=()
  [ "$nodes" -ge 3 ] || die "up-multi needs 3 nodes or more (a majority must survive one node's death), not $nodes"
  version_profile "$DEFAULT_VERSION"; cmd_fetch "$DEFAULT_VERSION"; ensure_dirs
  local voters; voters=$(multi_voters "$port" "$nodes")
  for i in $(seq 1 "$nodes"); do
    dir="$CLUSTERS/$name-$i"
    [ -f "$dir/cluster.id" ] && [ "$(cat "$dir/spec" 2>/dev/null)" = "$((port + 2 * (i - 1))) multi" ] && id=$(cat "$dir/cluster.id")
  done
  [ -n "$id" ] || id=$(new_cluster_id)
  for i in $(seq 1 "$nodes"); do
    dir="$CLUSTERS/$name-$i"
    is_running "$name-$i" && continue
    [ "$(cat "$dir/cluster.id" 2>/dev/null)" = "$id" ] || multi_init "$name-$i" "$((port + 2 * (i - 1)))" "$i" "$voters" "$id"
    launch_node "$name-$i" "$dir" "$MULTI_HEAP"
    pending+=("$name-$i")
  done
  local t0=$SECONDS n
  for n in "${pending[@]}"; do
    wait_for_line "$LOGS/$n.log" "Kafka Server started" "$(cat "$CLUSTERS/$n/pid")" "${KAFKA_START_TIMEOUT:-120}" "node $n"
  done
  echo "$name: ${#pending[@]} of $nodes nodes started in $((SECONDS - t0)) s (127.0.0.1:$port, +2 per node, Kafka $DEFAULT_VERSION)"
}

multi_init() { # NODE_NAME PORT NODE_ID VOTERS CLUSTER_ID
  local dir="$CLUSTERS/$1"
  rm -rf "$dir"; mkdir -p "$dir/data"
  multi_properties "$dir" "$2" "$3" "$4" >"$dir/server.properties"
  echo "bootstrap.servers=127.0.0.1:$2" >"$dir/client.properties"
  echo "$2 multi" >"$dir/spec"
  echo "$DEFAULT_VERSION" >"$dir/version"
  # shellcheck disable=SC2086
  "$JAVA" $QUICK_OPTS "$(log_flag warn)" -cp "$LIB/*" \
    kafka.tools.StorageTool format --cluster-id "$5" --config "$dir/server.properties" >"$LOGS/$1-format.log" 2>&1 \
    || { cat "$LOGS/$1-format.log" >&2; die "storage format failed for node $1"; }
  echo "$5" >"$dir/cluster.id"
}

launch_node() { # NAME DIR HEAP - a KRaft node's JVM in the background (start_cluster waits for it)
  local log="$LOGS/$1.log"
  : >"$log"
  # shellcheck disable=SC2086
  nohup $DETACH "$JAVA" $3 $PERF_OPTS -Dkafka.logs.dir="$LOGS" "$(log_flag info)" \
    -cp "$LIB/*" kafka.Kafka "$2/server.properties" >>"$log" 2>&1 </dev/null &
  echo $! >"$2/pid"
}

# ── ZooKeeper mode (Kafka before 3.3) ────────────────────────────────────────────────────────────────
# ZooKeeper runs from the broker's own classpath, as its own JVM on PORT+1, with its data in DIR/zookeeper;
# its pid is DIR/zk.pid, and down/kill/wipe stop it after the broker.

zookeeper_mode_init() { # DIR PORT - the broker's settings as in KRaft mode, with ZooKeeper instead of a controller
  local dir=$1 port=$2 zport=$(($2 + 1))
  mkdir -p "$dir/zookeeper"
  cat >"$dir/zookeeper.properties" <<PROPS
dataDir=$dir/zookeeper
clientPort=$zport
clientPortAddress=127.0.0.1
maxClientCnxns=0
admin.enableServer=false
tickTime=500
4lw.commands.whitelist=srvr,dump
PROPS
  {
    echo "# ZooKeeper mode: the KRaft settings of server_properties without the controller, listeners and share groups"
    server_properties "$dir" "$port" plain | grep -vE '^(process\.roles|node\.id|controller\.|share\.coordinator\.|listeners|advertised\.listeners|inter\.broker\.listener\.name|listener\.security\.protocol\.map)='
    cat <<PROPS
broker.id=0
listeners=PLAINTEXT://127.0.0.1:$port
advertised.listeners=PLAINTEXT://127.0.0.1:$port
zookeeper.connect=127.0.0.1:$zport
zookeeper.connection.timeout.ms=60000
zookeeper.session.timeout.ms=6000
PROPS
  } >"$dir/server.properties"
}

start_zookeeper() { # NAME DIR
  local log="$LOGS/$1-zookeeper.log"
  stop_pid_file "$2/zk.pid" TERM   # one left behind by a broker that died on its own
  : >"$log"
  # shellcheck disable=SC2086
  nohup $DETACH "$JAVA" $ZOOKEEPER_HEAP -XX:+UseSerialGC "$(log_flag info)" -cp "$LIB/*" \
    org.apache.zookeeper.server.quorum.QuorumPeerMain "$2/zookeeper.properties" >>"$log" 2>&1 </dev/null &
  echo $! >"$2/zk.pid"
  wait_for_line "$log" "binding to port" "$(cat "$2/zk.pid")" 60 "ZooKeeper of cluster $1"
  wait_stale_registration "$1" "$2"
}

# After kill -9, ZooKeeper restores the dead broker's session and its ephemeral /brokers/ids/0 until the session
# times out (zookeeper.session.timeout.ms); a broker starting before that exits with NodeExists. ZooKeeper's
# "dump" command lists the ephemeral nodes of live sessions; until ZooKeeper has loaded its data it answers "not
# currently serving requests" instead, which says nothing about registrations yet.
wait_stale_registration() { # NAME DIR
  local zport; zport=$(sed -n 's/^clientPort=//p' "$2/zookeeper.properties")
  local deadline=$((SECONDS + 30)) out
  while :; do
    out=$(exec 3<>"/dev/tcp/127.0.0.1/$zport" && printf dump >&3 && timeout 5 cat <&3) || out="(no answer)"
    [[ "$out" == *"ephemeral nodes dump"* && "$out" != */brokers/ids/* ]] && return 0
    [ "$SECONDS" -lt "$deadline" ] || die "cluster $1: ZooKeeper still holds a broker registration after 30 s: $out"
    sleep 0.5
  done
}

stop_pid_file() { # PIDFILE SIGNAL
  local pidf=$1 pid
  [ -f "$pidf" ] || return 0
  pid=$(cat "$pidf")
  if pid_is_ours "$pidf" "$pid"; then
    kill "-$2" "$pid" 2>/dev/null || true
    for _ in $(seq 1 75); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$pidf"
}

all_names() { [ -d "$CLUSTERS" ] && ls "$CLUSTERS" || true; }

# The broker, then its ZooKeeper if it has one (a broker's controlled shutdown needs its ZooKeeper).
stop_cluster() { stop_pid_file "$CLUSTERS/$1/pid" "$2"; stop_pid_file "$CLUSTERS/$1/zk.pid" "$2"; } # NAME SIGNAL

cmd_down() {
  [ $# -ge 1 ] || die "usage: down NAME... | --all"
  local names; if [ "$1" = --all ]; then names=$(all_names); else names="$*"; fi
  for n in $names; do stop_cluster "$n" TERM; done
}

cmd_kill() { [ $# -eq 1 ] || die "usage: kill NAME"; stop_cluster "$1" KILL; }

cmd_wipe() {
  [ $# -ge 1 ] || die "usage: wipe NAME... | --all"
  local names; if [ "$1" = --all ]; then names=$(all_names); else names="$*"; fi
  for n in $names; do stop_cluster "$n" KILL; rm -rf "${CLUSTERS:?}/$n"; done
}

cmd_status() {
  for n in $(all_names); do
    local spec="?" state=stopped
    [ -f "$CLUSTERS/$n/spec" ] && spec=$(cat "$CLUSTERS/$n/spec")
    is_running "$n" && state="running pid $(cat "$CLUSTERS/$n/pid")"
    echo "$n: $spec $(cluster_version "$n") $state"
  done
}

# ── MirrorMaker 2 ────────────────────────────────────────────────────────────────────────────────────
# 4.x runs from that release's broker classpath (kafka/pom.xml holds MM2 and log4j2). An older MM2 (2.4, its first
# release, to 3.9) runs from kafka/legacy-mm2/pom.xml's jars in kafka/lib-mm2-VERSION: Connect and the client of
# that release only, with its log4j 1.x binding, never mixed with a broker's or another release's jars.
mm2_profile() { # VERSION - fetches MM2's jars if needed; sets LIB and V_* as version_profile does for brokers
  local v=$1
  [[ "$v" =~ ^([0-9]+)\.([0-9]+)\.[0-9]+$ ]] || die "version '$v' is not a Kafka release like 3.9.1"
  local major=${BASH_REMATCH[1]} minor=${BASH_REMATCH[2]}
  if [ "$major" -ge 4 ]; then cmd_fetch "$v"; return 0; fi
  local release=$((major * 100 + minor))
  [ "$release" -ge 204 ] || die "MirrorMaker 2 came with Kafka 2.4: there is no MM2 $v"
  V_VERSION=$v V_POM="$ROOT/kafka/legacy-mm2/pom.xml" LIB="$ROOT/kafka/lib-mm2-$v" V_MARK="connect-mirror-$v.jar"
  V_MVN_ARGS="-Dkafka.version=$v -Dkafka.lib.dir=$LIB" V_LOGGING=log4j1
  # The brokers' logging binding of each release (version_profile): reload4j from 3.2 on, log4j 1.2.17 before.
  if [ "$release" -ge 302 ]; then V_MVN_ARGS+=" -Dlog.binding=reload4j -Dslf4j.version=1.7.36"
  else V_MVN_ARGS+=" -Dlog.binding=log4j12 -Dslf4j.version=1.7.30"; fi
  maven_fetch "MirrorMaker 2 $v"
}

cmd_mm2() { # NAME PROPS [--version VERSION] [MirrorMaker ARGS, e.g. --clusters ALIAS...]
  [ $# -ge 2 ] || die "usage: mm2 NAME MM2_PROPERTIES [--version VERSION] [--clusters ALIAS...]"
  local name=$1 cfg=$2 dir="$STATE/mm2/$1" version=$DEFAULT_VERSION args=(); shift 2
  while [ $# -gt 0 ]; do
    case $1 in
      --version) [ $# -ge 2 ] || die "mm2 --version needs a release, e.g. 3.9.1"; version=$2; shift 2 ;;
      *) args+=("$1"); shift ;;
    esac
  done
  mm2_profile "$version"; ensure_dirs; mkdir -p "$dir"
  local log="$LOGS/mm2-$name.log"
  : >"$log"
  # shellcheck disable=SC2086
  nohup "$JAVA" $MM2_HEAP $PERF_OPTS -Dkafka.logs.dir="$LOGS" -Dkmirror.mm2.dir="$dir/" "$(log_flag info)" \
    -cp "$LIB/*" org.apache.kafka.connect.mirror.MirrorMaker "$cfg" "${args[@]}" >>"$log" 2>&1 </dev/null &
  echo $! >"$dir/pid"
  # MirrorMaker.start() logs this once its herders are started (2.8.2, 3.6.2, 3.9.1 and 4.1.1 alike).
  wait_for_line "$log" "Kafka MirrorMaker started" "$(cat "$dir/pid")" 120 "MirrorMaker $name"
  echo "mm2 $name: MirrorMaker $version, pid $(cat "$dir/pid"), log $log"
}

cmd_mm2_down() { [ $# -eq 1 ] || die "usage: mm2-down NAME"; stop_pid_file "$STATE/mm2/$1/pid" TERM; }

tool_class() {
  case $1 in
    producer-perf) echo org.apache.kafka.tools.ProducerPerformance ;;
    consumer-perf) echo org.apache.kafka.tools.ConsumerPerformance ;;
    topics)        echo org.apache.kafka.tools.TopicCommand ;;
    groups)        echo org.apache.kafka.tools.consumer.group.ConsumerGroupCommand ;;
    acls)          echo org.apache.kafka.tools.AclCommand ;;
    configs)       echo kafka.admin.ConfigCommand ;;
    transactions)  echo org.apache.kafka.tools.TransactionsCommand ;;
    dump-log)      echo kafka.tools.DumpLogSegments ;;
    *)             echo "$1" ;;
  esac
}

cmd_tool() {
  [ $# -ge 1 ] || die "usage: tool CLASS|ALIAS ARGS..."
  local cls; cls=$(tool_class "$1"); shift
  cmd_fetch >&2; ensure_dirs
  # shellcheck disable=SC2086
  exec "$JAVA" -Xmx512m $PERF_OPTS -Dlog4j2.configurationFile="$STATE/log4j2-warn.properties" -cp "$LIB/*" "$cls" "$@"
}

main() {
  [ $# -ge 1 ] || { sed -n '2,/^set -e/{/^set -e/!p}' "$0"; exit 2; }
  local cmd=$1; shift
  case $cmd in
    fetch|up|down|kill|wipe|status|mm2|tool) "cmd_$cmd" "$@" ;;
    up-multi) cmd_up_multi "$@" ;;
    mm2-down) cmd_mm2_down "$@" ;;
    *) die "unknown command '$cmd' (fetch, up, up-multi, down, kill, wipe, status, mm2, mm2-down, tool)" ;;
  esac
}
main "$@"
