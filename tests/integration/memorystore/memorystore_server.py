#!/usr/bin/env python3
"""A local Memorystore for Redis (REST, v1) over TLS on loopback, for tests, the demo and users.

Standard library only. It implements the surface a client of redis.googleapis.com uses:

  GET    /v1/projects/P/locations/L/instances                     list
  GET    /v1/projects/P/locations/L/instances/ID                  get
  POST   /v1/projects/P/locations/L/instances?instanceId=ID       create  -> Operation
  PATCH  /v1/projects/P/locations/L/instances/ID?updateMask=a,b   patch   -> Operation
  DELETE /v1/projects/P/locations/L/instances/ID                  delete  -> Operation
  GET    /v1/projects/P/locations/L/operations/OP                 operations get

Mutations answer with a google.longrunning.Operation ({"name", "metadata", "done": false});
the operation is done after --op-polls polls of it, or --op-seconds seconds, whichever comes
first (0 turns a limit off), then carries "response" (the Instance, or google.protobuf.Empty
for a delete) or "error" (a google.rpc.Status with a numeric code). Instances go CREATING ->
READY, READY -> UPDATING -> READY, and are gone once their delete is done. Errors are
Google's JSON error bodies: {"error": {"code", "message", "status", "details"}}.

Authorization: with --token (repeatable), every request must carry "Authorization: Bearer T"
for one of them; a missing header gets 401 with WWW-Authenticate: Bearer realm=...; a wrong
or expired token gets 401 with error="invalid_token" and an ErrorInfo ACCESS_TOKEN_EXPIRED
(Google sends the same challenge for both). --token-file FILE adds the token in FILE, read
again on every request, so a test can rotate it.

Faults (--faults FILE, a JSON list of rules, or --faults-json TEXT). Each request is matched
against the rules in order; the first rule that matches and has uses left acts:
  {"match": {"kind": "create"|"get"|"list"|"patch"|"delete"|"operation"|"any",
             "method": "POST", "nth": N},   # nth: only the Nth request of that kind (1-based)
   "times": 1,            # how many requests it acts on (default 1; -1: all)
   "skip": 0,             # let this many matching requests through first
   <one action>}
Actions:
  "status": 503|429|500..., "retry_delay": S   a google.rpc.Status error body (the status's
                                               canonical name) with RetryInfo when S is given
  "retry_after": S                             with a Retry-After header as well
  "reset": true            reset the connection (RST) before the request is acted on
  "lose_response": true    act on the request (a create lands), then reset without answering
  "stall": S               read the request, send nothing for S seconds, then close
  "expire_token": true     answer 401 invalid_token (the token expired), whatever was sent
  "operation_error": {"code": 9, "message": "..."}   act on the mutation, but its operation
                                                     ends with this error
--log-file gets one line per request, flushed at once, for the tests to read:
  request conn=N method=M target=T kind=K auth=ok|missing|invalid|expired|none action=A
Tokens are never written to the log.

The server writes its port to --port-file once it accepts, and exits after --lifetime
seconds or when its parent process is gone.
"""

import json
import pathlib
import random
import re
import sys
import threading
import time
import urllib.parse

# tests/support/loopback_server.py: the scaffolding every loopback test server shares.
sys.path.insert(0, next(str(p / "support") for p in pathlib.Path(__file__).resolve().parents
                        if (p / "support" / "loopback_server.py").is_file()))
import loopback_server as base  # noqa: E402

LOCK = threading.Lock()

CANONICAL = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
             404: "NOT_FOUND", 409: "ALREADY_EXISTS", 429: "RESOURCE_EXHAUSTED",
             500: "INTERNAL", 501: "NOT_IMPLEMENTED", 502: "UNAVAILABLE",
             503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"}
REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden",
           404: "Not Found", 409: "Conflict", 429: "Too Many Requests",
           500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable",
           504: "Gateway Timeout"}

INSTANCES = re.compile(r"^/v1/projects/([^/]+)/locations/([^/]+)/instances$")
INSTANCE = re.compile(r"^/v1/projects/([^/]+)/locations/([^/]+)/instances/([^/]+)$")
OPERATION = re.compile(r"^/v1/(projects/[^/]+/locations/[^/]+/operations/[^/]+)$")
INSTANCE_ID = re.compile(r"^[a-z][a-z0-9-]{0,38}[a-z0-9]$")


def now_rfc3339():
    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + ".%06dZ" % int((t % 1) * 1e6)


def error_body(status, message, details=None):
    return {"error": {"code": status, "message": message,
                      "status": CANONICAL.get(status, "UNKNOWN"), "details": details or []}}


class Store:
    """Instances and operations, guarded by LOCK."""

    def __init__(self, op_polls, op_seconds):
        self.instances = {}   # full name -> dict
        self.operations = {}  # full name -> dict with "polls", "started", "finish" callback
        self.op_polls = op_polls
        self.op_seconds = op_seconds
        self.counts = {}      # kind -> requests seen

    def new_operation(self, project, location, target, verb, detail, finish, error=None):
        name = "projects/%s/locations/%s/operations/operation-%d-%s" % (
            project, location, int(time.time() * 1000), "%012x" % random.getrandbits(48))
        op = {"name": name, "target": target, "verb": verb, "detail": detail,
              "created": now_rfc3339(), "started": time.monotonic(), "polls": 0,
              "finish": finish, "error": error, "done": False, "result": None}
        self.operations[name] = op
        return op

    def operation_json(self, op):
        metadata = {"@type": "type.googleapis.com/google.cloud.redis.v1.OperationMetadata",
                    "createTime": op["created"], "target": op["target"], "verb": op["verb"],
                    "statusDetail": op["detail"], "cancelRequested": False, "apiVersion": "v1"}
        out = {"name": op["name"], "metadata": metadata}
        if op["done"]:
            metadata["endTime"] = op["ended"]
            out["done"] = True
            if op["error"] is not None:
                out["error"] = {"code": int(op["error"].get("code", 13)),
                                "message": op["error"].get("message", "operation failed"),
                                "details": op["error"].get("details", [])}
            else:
                out["response"] = op["result"]
        return out  # proto3 JSON leaves "done": false out.

    def advance(self, op, polled):
        if op["done"]:
            return
        if polled:
            op["polls"] += 1
        by_polls = self.op_polls > 0 and op["polls"] >= self.op_polls
        by_time = self.op_seconds > 0 and time.monotonic() - op["started"] >= self.op_seconds
        if by_polls or by_time:
            op["done"] = True
            op["ended"] = now_rfc3339()
            op["detail"] = "%s %s" % (op["verb"].capitalize(),
                                      "failed" if op["error"] is not None else "done")
            op["result"] = op["finish"](op["error"] is None)
        elif op["polls"] > 0:
            op["detail"] = "%s in progress (%d)" % (op["verb"].capitalize(), op["polls"])


class Server(base.ConnectionServer):
    timeout = 30.0

    def __init__(self, args):
        super().__init__(base.tls_context(args.cert, args.key))
        self.args = args
        self.store = Store(args.op_polls, args.op_seconds)
        self.rules = []
        if args.faults:
            with open(args.faults, encoding="utf-8") as f:
                self.rules = json.load(f)
        elif args.faults_json:
            self.rules = json.loads(args.faults_json)
        for rule in self.rules:
            rule.setdefault("times", 1)
            rule.setdefault("skip", 0)
        self.log = base.EventLog(args.log_file).write

    # --- Authorization

    def tokens(self):
        tokens = set(self.args.token or [])
        if self.args.token_file:
            try:
                with open(self.args.token_file, encoding="utf-8") as f:
                    t = f.read().strip()
                if t:
                    tokens.add(t)
            except OSError:
                pass
        return tokens

    def check_auth(self, headers):
        """Returns 'none' (no check), 'ok', 'missing' or 'invalid'."""
        tokens = self.tokens()
        if not tokens:
            return "none"
        value = headers.get("authorization")
        if value is None:
            return "missing"
        scheme, _, token = value.partition(" ")
        if scheme.lower() != "bearer" or token.strip() not in tokens:
            return "invalid"
        return "ok"

    # --- Faults

    def fault_for(self, kind, method):
        with LOCK:
            n = self.store.counts.get(kind, 0) + 1
            self.store.counts[kind] = n
            for rule in self.rules:
                m = rule.get("match", {})
                if m.get("kind", "any") not in ("any", kind):
                    continue
                if "method" in m and m["method"] != method:
                    continue
                if "nth" in m and int(m["nth"]) != n:
                    continue
                if rule["skip"] > 0:
                    rule["skip"] -= 1
                    continue
                if rule["times"] == 0:
                    continue
                if rule["times"] > 0:
                    rule["times"] -= 1
                return rule
        return None

    # --- Connections

    def error(self, conn_id, e):
        self.log("error conn=%d %s" % (conn_id, type(e).__name__))

    def serve(self, sock, conn_id):
        reader = base.HttpReader(sock)
        while True:
            head = reader.read_head()
            if head is None:
                return
            method, target, headers = head
            body = reader.read_body(base.content_length(headers))
            if body is None:
                return
            if not self.handle(sock, conn_id, method, target, body, headers):
                return

    def handle(self, sock, conn_id, method, target, body, headers):
        """Answers one request; returns whether the connection stays open."""
        parsed = urllib.parse.urlsplit(target)
        path, query = parsed.path, urllib.parse.parse_qs(parsed.query)
        kind = classify(method, path)
        if kind == "unknown":
            self.log("request conn=%d method=%s target=%s kind=unknown" % (conn_id, method, target))
            return send_json(sock, 404, error_body(404, "No such method: %s %s" % (method, path)))
        auth = self.check_auth(headers)
        rule = self.fault_for(kind, method)
        action = "none"
        if rule is not None:
            action = next((k for k in ("status", "reset", "lose_response", "stall", "expire_token",
                                       "operation_error") if k in rule), "none")
        self.log("request conn=%d method=%s target=%s kind=%s auth=%s action=%s"
                 % (conn_id, method, target, kind, auth, action))

        if action == "reset":
            base.reset(sock)
            return False
        if action == "stall":
            time.sleep(float(rule["stall"]))
            return False
        if action == "expire_token" or auth in ("invalid", "missing"):
            return self.unauthorized(sock, auth if action != "expire_token" else "invalid")
        if action == "status":
            status = int(rule["status"])
            details = []
            extra = []
            if "retry_delay" in rule:
                details.append({"@type": "type.googleapis.com/google.rpc.RetryInfo",
                                "retryDelay": "%gs" % float(rule["retry_delay"])})
            if "retry_after" in rule:
                extra.append(("Retry-After", "%d" % int(rule["retry_after"])))
            message = {429: "Quota exceeded for quota metric 'Requests'",
                       503: "The service is currently unavailable."}.get(status, "Injected error")
            return send_json(sock, status, error_body(status, message, details), extra)

        operation_error = rule.get("operation_error") if action == "operation_error" else None
        status, payload = self.act(method, path, query, body, kind, operation_error)
        if action == "lose_response":
            base.reset(sock)  # The request was acted on; its answer never arrives.
            return False
        return send_json(sock, status, payload)

    def unauthorized(self, sock, why):
        if why == "missing":
            challenge = 'Bearer realm="https://accounts.google.com/"'
            body = error_body(401, "Request is missing required authentication credential.")
        else:
            challenge = 'Bearer realm="https://accounts.google.com/", error="invalid_token"'
            body = error_body(401, "Request had invalid authentication credentials.", [
                {"@type": "type.googleapis.com/google.rpc.ErrorInfo",
                 "reason": "ACCESS_TOKEN_EXPIRED", "domain": "googleapis.com"}])
        return send_json(sock, 401, body, [("WWW-Authenticate", challenge)])

    # --- The API

    def act(self, method, path, query, body, kind, operation_error):
        store = self.store
        with LOCK:
            # Operations finish by time (--op-seconds) whether anyone polls them or not, as the
            # real service's do: a client that lost a create's answer sees its instance become
            # READY by reading the instance.
            for op in store.operations.values():
                store.advance(op, False)
            if kind == "list":
                project, location = INSTANCES.match(path).groups()
                prefix = "projects/%s/locations/%s/instances/" % (project, location)
                items = [i for n, i in sorted(store.instances.items()) if n.startswith(prefix)]
                return 200, {"instances": items, "unreachable": []}
            if kind == "operation":
                name = OPERATION.match(path).group(1)
                op = store.operations.get(name)
                if op is None:
                    return 404, error_body(404, "Operation '%s' not found" % name)
                store.advance(op, True)
                return 200, store.operation_json(op)
            if kind == "create":
                project, location = INSTANCES.match(path).groups()
                instance_id = (query.get("instanceId") or [""])[0]
                if not INSTANCE_ID.match(instance_id):
                    return 400, error_body(400, "instanceId must be 2-40 lower-case letters, "
                                                "digits and hyphens, starting with a letter")
                try:
                    spec = json.loads(body.decode("utf-8") or "{}")
                except ValueError:
                    return 400, error_body(400, "Invalid JSON payload received.")
                if not isinstance(spec, dict):
                    return 400, error_body(400, "Invalid JSON payload received.")
                name = "projects/%s/locations/%s/instances/%s" % (project, location, instance_id)
                if name in store.instances:
                    return 409, error_body(409, "Resource '%s' already exists" % name)
                instance = {
                    "name": name, "displayName": spec.get("displayName", instance_id),
                    "labels": spec.get("labels", {}),
                    "locationId": spec.get("locationId", location + "-a"),
                    "redisVersion": spec.get("redisVersion", "REDIS_7_0"),
                    "tier": spec.get("tier", "BASIC"),
                    "memorySizeGb": int(spec.get("memorySizeGb", 1)),
                    "host": "10.0.0.%d" % (3 + len(store.instances) % 250), "port": 6379,
                    "state": "CREATING", "createTime": now_rfc3339(),
                    "connectMode": "DIRECT_PEERING"}
                store.instances[name] = instance

                def finish(ok, name=name):
                    if not ok:
                        store.instances.pop(name, None)
                        return None
                    inst = store.instances[name]
                    inst["state"] = "READY"
                    return dict(inst, **{"@type": "type.googleapis.com/google.cloud.redis.v1.Instance"})

                op = store.new_operation(project, location, name, "create", "Creating instance",
                                         finish, operation_error)
                store.advance(op, False)
                return 200, store.operation_json(op)
            # get, patch, delete
            m = INSTANCE.match(path)
            project, location, instance_id = m.groups()
            name = "projects/%s/locations/%s/instances/%s" % (project, location, instance_id)
            for op in store.operations.values():
                store.advance(op, False)
            instance = store.instances.get(name)
            if instance is None:
                return 404, error_body(404, "Resource '%s' was not found" % name)
            if kind == "get":
                return 200, instance
            if instance["state"] != "READY":
                return 400, error_body(400, "Instance %s is in state %s; the request needs READY"
                                       % (name, instance["state"]))
            if kind == "patch":
                try:
                    spec = json.loads(body.decode("utf-8") or "{}")
                except ValueError:
                    return 400, error_body(400, "Invalid JSON payload received.")
                mask = [f for f in (query.get("updateMask") or [""])[0].split(",") if f]
                if not mask:
                    return 400, error_body(400, "updateMask is required")
                for field in mask:
                    if field not in ("displayName", "labels", "memorySizeGb", "redisConfigs",
                                     "replicaCount", "readReplicasMode"):
                        return 400, error_body(400, "updateMask names '%s', which cannot be updated"
                                               % field)
                old = {f: instance.get(f) for f in mask}
                instance["state"] = "UPDATING"
                for field in mask:
                    instance[field] = spec.get(field)

                def finish(ok, name=name, old=old):
                    inst = store.instances[name]
                    inst["state"] = "READY"
                    if not ok:
                        inst.update(old)
                        return None
                    return dict(inst, **{"@type": "type.googleapis.com/google.cloud.redis.v1.Instance"})

                op = store.new_operation(project, location, name, "update", "Updating instance",
                                         finish, operation_error)
            else:
                instance["state"] = "DELETING"

                def finish(ok, name=name):
                    if not ok:
                        store.instances[name]["state"] = "READY"
                        return None
                    store.instances.pop(name, None)
                    return {"@type": "type.googleapis.com/google.protobuf.Empty"}

                op = store.new_operation(project, location, name, "delete", "Deleting instance",
                                         finish, operation_error)
            store.advance(op, False)
            return 200, store.operation_json(op)

def classify(method, path):
    if INSTANCES.match(path):
        return {"GET": "list", "POST": "create"}.get(method, "unknown")
    if INSTANCE.match(path):
        return {"GET": "get", "PATCH": "patch", "DELETE": "delete"}.get(method, "unknown")
    if OPERATION.match(path) and method == "GET":
        return "operation"
    return "unknown"


def send_json(sock, status, payload, extra_headers=()):
    body = json.dumps(payload, indent=2).encode("utf-8") + b"\n"
    fields = [("Content-Type", "application/json; charset=UTF-8"),
              ("Content-Length", len(body)), ("Vary", "Origin, X-Origin, Referer")]
    sock.sendall(base.http_head(status, REASONS.get(status, "Status"), fields + list(extra_headers))
                 + body)
    return True


def main():
    p = base.argument_parser(__doc__, lifetime=300.0, port_file_required=False)
    base.add_tls_arguments(p, required=True)
    p.add_argument("--port", type=int, default=0, help="default: an ephemeral port")
    base.add_log_argument(p, required=False)
    p.add_argument("--token", action="append", help="an accepted bearer token (repeatable)")
    p.add_argument("--token-file", help="a file holding one more accepted token, read per request")
    p.add_argument("--op-polls", type=int, default=2, help="polls until an operation is done")
    p.add_argument("--op-seconds", type=float, default=0.0, help="seconds until it is done")
    p.add_argument("--faults", help="a JSON file with the fault rules")
    p.add_argument("--faults-json", help="the fault rules as JSON text")
    args = p.parse_args()
    listener = base.tcp_listener(port=args.port)
    # Started by hand (no port file), it prints its URL and outlives the shell it came from.
    Server(args).run(listener, args.port_file, args.lifetime, watch_parent=bool(args.port_file),
                     url="listening on https://127.0.0.1:%d" % listener.getsockname()[1])


if __name__ == "__main__":
    sys.exit(main())
