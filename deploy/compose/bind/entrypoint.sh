#!/bin/sh
# First start: a TSIG key for zonestream (kept in the keys volume, shared
# with the applier) and the demo zone (kept in the data volume, where named
# writes its journal). Later starts keep both.
set -eu
if [ ! -s /keys/tsig-secret ]; then
  tsig-keygen -a hmac-sha256 zonestream-key > /keys/tsig.conf
  sed -n 's/.*secret "\(.*\)";.*/\1/p' /keys/tsig.conf > /keys/tsig-secret
  # The applier runs as another user (65532) and only reads it.
  chmod 0444 /keys/tsig.conf /keys/tsig-secret
fi
[ -s /var/lib/bind/example.org.zone ] || cp /etc/bind/example.org.zone /var/lib/bind/example.org.zone
chown -R bind:bind /var/lib/bind
exec named -g -u bind -c /etc/bind/named.conf
