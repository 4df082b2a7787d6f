// Live updates of the portal's page over server-sent events. The page
// works without it; this only keeps it current.
(function () {
  "use strict";
  const live = document.getElementById("live");
  const groups = document.getElementById("groups");
  const detail = document.getElementById("name");
  const search = document.getElementById("q");
  let failed = false;

  // Typing in the search box hides the rows that do not match at once;
  // submitting the form asks the server.
  if (search && groups) {
    search.addEventListener("input", () => {
      const q = search.value.trim().toLowerCase();
      for (const row of groups.querySelectorAll("tr[data-name]")) {
        row.classList.toggle("hidden", q !== "" && !row.textContent.toLowerCase().includes(q));
      }
    });
  }

  const es = new EventSource("/api/events");
  es.onopen = () => {
    live.classList.add("on");
    if (failed) location.reload(); // missed updates while away
  };
  es.onerror = () => { live.classList.remove("on"); failed = true; };
  es.addEventListener("names", (e) => {
    const u = JSON.parse(e.data);
    if (detail) {
      if (u.names.some((n) => n.name === detail.dataset.name) || (u.removed || []).includes(detail.dataset.name)) {
        reloadSoon();
      }
      return;
    }
    if (!groups) return;
    // Counts come for the statuses that have names; the others are 0.
    const counts = {};
    for (const [status, n] of Object.entries(u.counts || {})) counts[status.replaceAll(" ", "-")] = n;
    for (const el of document.querySelectorAll("[data-count]")) el.textContent = counts[el.dataset.count] || 0;
    for (const n of u.names) upsert(n);
    for (const name of u.removed || []) {
      const row = document.getElementById("n:" + name);
      if (row) row.remove();
    }
    for (const d of groups.querySelectorAll("details.zone")) {
      if (!d.querySelector("tr[data-name]")) d.remove(); // its names moved or went
    }
    document.getElementById("total").textContent = groups.querySelectorAll("tr[data-name]").length;
  });

  let timer = null;
  function reloadSoon() {
    if (!timer) timer = setTimeout(() => location.reload(), 300);
  }

  // matches says whether a name belongs on the page under its filters.
  function matches(n) {
    const f = groups.dataset;
    if (f.filterStatus && f.filterStatus !== n.statusSlug) return false;
    if (f.filterZone && f.filterZone !== n.zone) return false;
    const objs = n.objects || [];
    if (f.filterCluster && !objs.some((o) => o.cluster === f.filterCluster)) return false;
    if (f.filterNamespace && !objs.some((o) => o.namespace === f.filterNamespace)) return false;
    if (f.filterSource && !objs.some((o) => o.source === f.filterSource)) return false;
    if (f.filterProvider && !(n.providers || []).includes(f.filterProvider)) return false;
    return true;
  }

  function upsert(n) {
    let row = document.getElementById("n:" + n.name);
    if (!matches(n)) {
      if (row) row.remove();
      return;
    }
    if (!row) {
      if (document.getElementById("more")) return; // a partial list: search finds it
      row = document.createElement("tr");
      row.id = "n:" + n.name;
      row.dataset.name = n.name;
      row.innerHTML = '<td class="name"><a></a></td><td><span class="status"></span></td>' +
        '<td class="records"></td><td class="objects"></td><td class="providers"></td><td class="reason"></td>' +
        '<td class="changed"></td>';
      row.querySelector("a").href = "/names/" + encodeURIComponent(n.name);
      row.querySelector("a").textContent = n.name;
      tbody(n.zone).appendChild(row);
    } else if (row.parentElement.dataset.zone !== (n.zone || "")) {
      tbody(n.zone).appendChild(row); // its zone became known
    }
    row.dataset.status = n.statusSlug;
    const st = row.querySelector(".status");
    st.className = "status s-" + n.statusSlug;
    st.textContent = n.status;
    let fails = row.querySelector(".fails");
    if (n.failures) {
      if (!fails) { fails = document.createElement("span"); fails.className = "fails"; st.after(fails); }
      fails.textContent = " ×" + n.failures;
    } else if (fails) fails.remove();
    row.querySelector(".records").textContent = (n.records || []).join(", ");
    row.querySelector(".objects").textContent = n.objectSummary || "";
    row.querySelector(".providers").textContent = (n.providers || []).join(", ") || (n.refused ? n.refused.reason : "");
    row.querySelector(".reason").textContent = n.reason || "";
    row.querySelector(".changed").textContent = n.changed.replace("T", " ").replace(/\.\d+/, "");
  }

  // tbody is the table of a zone, made when the zone is new on the page.
  function tbody(zone) {
    let tb = groups.querySelector('tbody[data-zone="' + CSS.escape(zone || "") + '"]');
    if (tb) return tb;
    const empty = document.getElementById("empty");
    if (empty) empty.remove();
    const d = document.createElement("details");
    d.className = "zone";
    d.open = true;
    d.dataset.zone = zone || "";
    d.innerHTML = '<summary><span class="zname"></span></summary><table><thead><tr><th>name</th><th>status</th>' +
      "<th>records</th><th>wanted by</th><th>provider</th><th>why</th><th>changed</th></tr></thead><tbody></tbody></table>";
    d.querySelector(".zname").textContent = zone || "(no managed zone)";
    tb = d.querySelector("tbody");
    tb.dataset.zone = zone || "";
    groups.appendChild(d);
    return tb;
  }
})();
