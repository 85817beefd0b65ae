// The labelling page of `localeval label` (localeval/docs/label.md). Talks only to the server it
// came from; every text from the run is set with textContent, never as markup.
"use strict";

const TOKEN = document.querySelector('meta[name="localeval-token"]').content;

const T = {
  en: {
    metric: "Metric", keys_button: "Keys (?)", order: "Order:", prev: "Previous", next: "Next",
    question: "Question", ground_truth: "Reference answer", contexts: "Contexts",
    history: (c, n) => `Conversation ${c}, before its turn ${n} (the turn labelled below)`,
    role: { user: "User", assistant: "Assistant" },
    answer_claims: "The answer, and the claims the judge judged in it",
    truth_claims: "The reference answer's claims the judge judged against the contexts",
    answer_sample: "The answer", reference_answer: "Reference answer",
    reference_contexts: "Reference contexts",
    evidence_legend: "Underlined: passages the judge was shown for a claim; highlighted: the " +
      "sentence closest to the focused claim.",
    order_random: (s) => `Random order (seed ${s}) — for the estimate`,
    order_informative: "Most informative first (P nearest τ) — for fitting",
    supported: "Supported", not_supported: "Not supported", unsure: "Unsure",
    right: "1 — fully", partly: "½ — partly", wrong: "0 — not at all",
    grade_hint: (m, d) => `Your own value of ${m} for this sample, on the judge's scale ` +
      `(${d}):`,
    note: "note (optional, e)", judge: "judge", judge_yes: "supported", judge_no: "not supported",
    why: "why", by_rule: "decided by a rule", score: "score", weighted: "weighted",
    sample_of: (p, n, id) => `Sample ${p} of ${n} · id ${id}`,
    row_of: (p, n, id) => `Row ${p} of ${n} · id ${id}`,
    progress: (st) => `Random order: ${st.random_done} of ${st.total} samples labelled` +
      ` · informative order: ${st.informative_done} · claims marked: ${st.claims_labelled}` +
      ` · labels file: ${st.labels_file}`,
    interval_wait: (iv) => `Current interval: after 2 samples labelled in the random order ` +
      `with no unsure claim (${iv.n_labels} so far) · judge mean ${f3(iv.judge_mean)} over ` +
      `${iv.n_rows} ${unitName(iv)}`,
    interval: (m, iv) => `${m}: judge alone ${f3(iv.judge_mean)} · labels alone ` +
      `${f3(iv.labels_only_mean)} ${ci(iv.labels_only_ci)} · corrected (prediction-powered) ` +
      `${f3(iv.mean)} ${ci(iv.ci)} · 95 % intervals from ${iv.n_labels} random labels of ` +
      `${iv.n_rows} ${unitName(iv)}, worth ${iv.effective_labels.toFixed(1)} labels alone`,
    unsure_drawn: (iv) => ` · ${iv.unsure} of the ${iv.unsure + iv.n_labels} samples drawn ` +
      "were marked unsure and are left out: the labels are no longer a uniform draw, and the " +
      "interval is conditional on the samples decided",
    all_marked: "Every claim is marked: Enter or → for the next sample.",
    mark_first: "Mark every claim (unsure counts) before the next sample: the random order is " +
      "labelled in sequence, so that its labels are a uniform random draw.",
    grade_first: "Grade the sample (unsure counts) before the next one: the random order is " +
      "labelled in sequence.",
    confirm: "This sample was labelled in the informative order. Its marks count in the random " +
      "draw once you confirm them here (Enter).",
    confirm_button: "Confirm these marks for the random draw",
    correction: "Labelled in the random order: a correction made here stays a random label.",
    random_done: "Every sample is labelled in the random order.",
    informative_done: "The end of the informative order (← goes back).",
    no_context: "Contexts not shown",
    evidence_text: "closest sentence in the contexts:",
    your_mark: "your mark", drawn: (o) => o === "random" ? "random draw" : "informative",
    accept: "Accept (a)", reject: "Reject (r)", edit: "Edit (e)", save: "Reject with this reason",
    save_edit: "Save the edit (Ctrl+Enter)", cancel: "Cancel (Esc)",
    reason_ph: "why is this row wrong? (Enter saves)",
    keep_unreviewed: "also keep the rows not reviewed yet",
    write_kept: "Write the kept test set",
    wrote: (w) => `wrote ${w.rows} rows to ${w.path}`,
    review_progress: (st) => `${st.accept} accepted · ${st.edit} edited · ${st.reject} ` +
      `rejected · ${st.undecided} not reviewed · of ${st.total} · decisions file: ` +
      `${st.decisions_file}`,
    decided: { accept: "Accepted", reject: "Rejected", edit: "Edited" },
    review_title: "Review of a generated test set",
    keys_title: "Keys",
    saving: "Saving…",
    saved: (f) => `Saved: the mark is on disk in ${f}.`,
    unsaved: (n, why) => `Not saved: ${n} mark(s) wait to be sent — ${why}. They are kept ` +
      "in this browser and sent again every few seconds.",
    unsaved_hint: "If the server was stopped, start it again with the same --port and open " +
      "the address it prints: the marks are sent then.",
    restarted: (n) => `Not saved: the labelling server was restarted (its token changed). ` +
      `Open the address it printed now: the ${n} mark(s) below are kept in this browser and ` +
      "sent when the page opens there (on the same port; on another port, mark them again).",
    reconnected: (n) => `Reconnected: ${n} mark(s) made while the server was away are saved ` +
      "now (on disk).",
    refused: (why) => `Not saved, refused by the server: ${why}`,
    server_hint: "Free the disk (or fix the file) and the next attempt writes them.",
    send_now: "Send now",
    unreachable: "the labelling server cannot be reached (stopped, or the connection dropped)",
    no_answer: (s) => `no answer from the labelling server within ${s} s`,
    token_changed: "the labelling server was restarted (its token changed): open the address " +
      "it printed now",
    wait_saved: "Some marks are not saved yet: wait until they are sent (or open the address " +
      "the restarted server printed) before the next sample.",
    pending_one: (m) => `sample ${m.id}` + (m.claim === null ? "" : `, claim ${m.claim + 1}`) +
      ` (${m.metric}): ${labelName(m)}`,
    not_saved_tag: "not saved yet",
    // the same lines for the decisions of a test set's review
    saved_review: (f) => `Saved: the decision is on disk in ${f}.`,
    unsaved_review: (n, why) => `Not saved: ${n} decision(s) wait to be sent — ${why}. They ` +
      "are kept in this browser and sent again every few seconds.",
    unsaved_hint_review: "If the server was stopped, start it again with the same --port and " +
      "open the address it prints: the decisions are sent then.",
    restarted_review: (n) => "Not saved: the labelling server was restarted (its token " +
      `changed). Open the address it printed now: the ${n} decision(s) below are kept in this ` +
      "browser and sent when the page opens there (on the same port; on another port, decide " +
      "those rows again).",
    reconnected_review: (n) => `Reconnected: ${n} decision(s) made while the server was away ` +
      "are saved now (on disk).",
    wait_saved_review: "Some decisions are not saved yet: wait until they are sent (or open the " +
      "address the restarted server printed) before writing the kept test set.",
    pending_one_review: (d) => `row ${d.id}: ${T[lang].decided[d.decision]}` +
      (d.reason ? ` (${d.reason})` : ""),
    diagnosis: "diagnosis",
    classes: {
      supported: "supported: right, and a context entails it",
      noise_relevant: "noise (relevant context): wrong, entailed by a relevant context",
      noise_irrelevant: "noise (irrelevant context): wrong, entailed only by an irrelevant one",
      hallucination: "hallucination: wrong, and no context entails it",
      self_knowledge: "self-knowledge: right, but no context entails it",
      not_retrieved: "not retrieved: no context entails it (the retriever)",
      retrieved: "retrieved: a context entails it",
      used: "used: a context entails it and the answer states it",
      unused: "unused: a context entails it, the answer leaves it out (the generator)",
    },
    keyline_run: "Keys: y supported · n not supported · u unsure · j/k next/previous claim · " +
      "e note · Enter next sample · ← back · ? all keys",
    keyline_class: (cs) => `Keys: ${cs.map((c, n) => `${n + 1} ${c}`).join(" · ")} · u unsure · ` +
      "j/k next/previous claim · e note · Enter next sample · ← back · ? all keys",
    class_head: "The claim's diagnosis class (yours): the classes give every diagnosis score",
    judge_class: "judge's class",
    keyline_sample: "Keys: y 1 · p ½ · n 0 · u unsure · e note · Enter next sample · ← back · " +
      "? all keys",
    keyline_review: "Keys: a accept · r reject (reason, Enter) · e edit (Ctrl+Enter saves) · " +
      "→/← next/previous row · ? all keys",
    orders_help: "The random order is what the corrected estimate uses: label it from the " +
      "start, in sequence. The informative order shows first the samples whose claims the " +
      "judge was least sure of; its labels are kept apart and serve to fit τ or a verifier " +
      "head. Every mark is written to the labels file at once.",
    keys_run: [
      ["j / ↓", "next claim"], ["k / ↑", "previous claim"], ["y", "supported (sample: 1)"],
      ["n", "not supported (sample: 0)"], ["p", "½ (a sample without claims)"],
      ["u", "unsure"], ["e", "write a note for the focused claim; Enter keeps it"],
      ["Enter / →", "next sample (confirm, where asked)"], ["←", "previous sample"],
      ["o", "switch order"], ["?", "show or hide the keys"],
    ],
    keys_class: [
      ["j / ↓", "next claim"], ["k / ↑", "previous claim"],
      ["1, 2, …", "the claim's class, in the order of its buttons"], ["u", "unsure"],
      ["e", "write a note for the focused claim; Enter keeps it"],
      ["Enter / →", "next sample (confirm, where asked)"], ["←", "previous sample"],
      ["o", "switch order"], ["?", "show or hide the keys"],
    ],
    keys_review: [
      ["a", "accept the row"], ["r", "reject it: type the reason, Enter"],
      ["e", "edit question or reference answer; Ctrl+Enter saves, Esc cancels"],
      ["→ / ←", "next / previous row"], ["?", "show or hide the keys"],
    ],
  },
  zh: {
    metric: "指标", keys_button: "快捷键 (?)", order: "顺序：", prev: "上一个", next: "下一个",
    question: "问题", ground_truth: "参考答案", contexts: "上下文",
    history: (c, n) => `对话 ${c} 在第 ${n} 轮之前的内容（下面标注的是这一轮）`,
    role: { user: "用户", assistant: "助手" },
    answer_claims: "答案，及评审模型判断的各条论断", answer_sample: "答案",
    truth_claims: "参考答案中评审模型对照上下文判断的论断",
    reference_answer: "参考答案", reference_contexts: "参考上下文",
    evidence_legend: "下划线：评审模型判断某条论断时看到的段落；高亮：与当前论断最接近的句子。",
    order_random: (s) => `随机顺序（种子 ${s}）— 用于校正估计`,
    order_informative: "信息量优先（P 最接近 τ）— 用于拟合",
    supported: "有依据", not_supported: "无依据", unsure: "不确定",
    right: "1 — 完全", partly: "½ — 部分", wrong: "0 — 完全不",
    grade_hint: (m, d) => `你对该样本 ${m} 的取值，与评审同一尺度（${d}）：`,
    note: "备注（可选，e）", judge: "评审", judge_yes: "有依据", judge_no: "无依据",
    why: "理由", by_rule: "由规则判定", score: "得分", weighted: "加权得分",
    sample_of: (p, n, id) => `第 ${p} / ${n} 个样本 · id ${id}`,
    row_of: (p, n, id) => `第 ${p} / ${n} 行 · id ${id}`,
    progress: (st) => `随机顺序：已标注 ${st.random_done} / ${st.total} 个样本` +
      ` · 信息量顺序：${st.informative_done} · 已标论断：${st.claims_labelled}` +
      ` · 标注文件：${st.labels_file}`,
    interval_wait: (iv) => "当前区间：需随机顺序中至少 2 个标注完整且无“不确定”的样本" +
      `（目前 ${iv.n_labels}）` +
      ` · 评审均值 ${f3(iv.judge_mean)}（${iv.n_rows} ${unitName(iv)}）`,
    interval: (m, iv) => `${m}：仅评审 ${f3(iv.judge_mean)} · 仅标注 ` +
      `${f3(iv.labels_only_mean)} ${ci(iv.labels_only_ci)} · 校正后（预测驱动推断）` +
      `${f3(iv.mean)} ${ci(iv.ci)} · 95% 区间，基于 ${iv.n_rows} ${unitName(iv)}中的 ` +
      `${iv.n_labels} ` +
      `个随机标注，相当于单独 ${iv.effective_labels.toFixed(1)} 个标注`,
    unsure_drawn: (iv) => ` · 抽到的 ${iv.unsure + iv.n_labels} 个样本中有 ${iv.unsure} 个标为` +
      "“不确定”而未计入：标注已不再是均匀随机抽样，区间只对已判定的样本成立",
    all_marked: "所有论断都已标注：按 Enter 或 → 进入下一个样本。",
    mark_first: "请先标完每条论断（“不确定”也算）：随机顺序须依次标注，标注才是均匀随机抽样。",
    grade_first: "请先给该样本打分（“不确定”也算）：随机顺序须依次标注。",
    confirm: "该样本是在信息量顺序中标注的。在此确认（Enter）后，这些标注计入随机抽样。",
    confirm_button: "确认这些标注计入随机抽样",
    correction: "该样本在随机顺序中标注：在此修改仍算随机标注。",
    random_done: "随机顺序中的所有样本都已标注。",
    informative_done: "信息量顺序已到末尾（← 返回）。",
    no_context: "未显示上下文",
    evidence_text: "上下文中最接近的句子：",
    your_mark: "你的标注", drawn: (o) => o === "random" ? "随机抽样" : "信息量",
    accept: "接受 (a)", reject: "拒绝 (r)", edit: "编辑 (e)", save: "以此理由拒绝",
    save_edit: "保存编辑 (Ctrl+Enter)", cancel: "取消 (Esc)",
    reason_ph: "这一行错在哪里？（Enter 保存）",
    keep_unreviewed: "同时保留尚未审阅的行",
    write_kept: "写出保留的测试集",
    wrote: (w) => `已写出 ${w.rows} 行到 ${w.path}`,
    review_progress: (st) => `接受 ${st.accept} · 编辑 ${st.edit} · 拒绝 ${st.reject} · ` +
      `未审阅 ${st.undecided} · 共 ${st.total} · 决定文件：${st.decisions_file}`,
    decided: { accept: "已接受", reject: "已拒绝", edit: "已编辑" },
    review_title: "审阅生成的测试集",
    keys_title: "快捷键",
    saving: "正在保存…",
    saved: (f) => `已保存：标注已写入磁盘上的 ${f}。`,
    unsaved: (n, why) => `未保存：${n} 个标注等待发送 — ${why}。它们保存在本浏览器中，每隔几秒重新发送。`,
    unsaved_hint: "如果服务器已停止，请用同一个 --port 重新启动，并打开它打印的地址：届时会发送这些标注。",
    restarted: (n) => "未保存：标注服务器已重启（令牌已变）。请打开它现在打印的地址：下列 " +
      `${n} 个标注保存在本浏览器中，页面在那里打开时会发送（须为同一端口；若换了端口，请重新标注）。`,
    reconnected: (n) => `已重新连接：服务器离线期间的 ${n} 个标注现已保存（已写入磁盘）。`,
    refused: (why) => `未保存，服务器拒绝：${why}`,
    server_hint: "请释放磁盘空间（或修复该文件），下一次尝试即会写入。",
    send_now: "立即发送",
    unreachable: "无法连接标注服务器（已停止，或连接中断）",
    no_answer: (s) => `标注服务器 ${s} 秒内没有响应`,
    token_changed: "标注服务器已重启（令牌已变）：请打开它现在打印的地址",
    wait_saved: "有标注尚未保存：请等待发送完成（或打开重启后的服务器打印的地址），再进入下一个样本。",
    pending_one: (m) => `样本 ${m.id}` + (m.claim === null ? "" : `，论断 ${m.claim + 1}`) +
      `（${m.metric}）：${labelName(m)}`,
    not_saved_tag: "尚未保存",
    saved_review: (f) => `已保存：审阅决定已写入磁盘上的 ${f}。`,
    unsaved_review: (n, why) => `未保存：${n} 个审阅决定等待发送 — ${why}。它们保存在本浏览器中，` +
      "每隔几秒重新发送。",
    unsaved_hint_review: "如果服务器已停止，请用同一个 --port 重新启动，并打开它打印的地址：届时会发送这些决定。",
    restarted_review: (n) => "未保存：标注服务器已重启（令牌已变）。请打开它现在打印的地址：下列 " +
      `${n} 个决定保存在本浏览器中，页面在那里打开时会发送（须为同一端口；若换了端口，请重新审阅这些行）。`,
    reconnected_review: (n) => `已重新连接：服务器离线期间的 ${n} 个决定现已保存（已写入磁盘）。`,
    wait_saved_review: "有决定尚未保存：请等待发送完成（或打开重启后的服务器打印的地址），再写出保留的测试集。",
    pending_one_review: (d) => `第 ${d.id} 行：${T[lang].decided[d.decision]}` +
      (d.reason ? `（${d.reason}）` : ""),
    diagnosis: "诊断",
    classes: {
      supported: "有依据：正确，且有上下文蕴含",
      noise_relevant: "噪声（相关上下文）：错误，由相关上下文蕴含",
      noise_irrelevant: "噪声（无关上下文）：错误，仅由无关上下文蕴含",
      hallucination: "幻觉：错误，且没有上下文蕴含",
      self_knowledge: "自有知识：正确，但没有上下文蕴含",
      not_retrieved: "未检索到：没有上下文蕴含（检索器）",
      retrieved: "已检索到：有上下文蕴含",
      used: "已使用：有上下文蕴含，答案也陈述了",
      unused: "未使用：有上下文蕴含，答案却遗漏（生成器）",
    },
    keyline_run: "快捷键：y 有依据 · n 无依据 · u 不确定 · j/k 下/上一条论断 · e 备注 · " +
      "Enter 下一个样本 · ← 返回 · ? 全部快捷键",
    keyline_class: (cs) => `快捷键：${cs.map((c, n) => `${n + 1} ${c}`).join(" · ")} · u 不确定 · ` +
      "j/k 下/上一条论断 · e 备注 · Enter 下一个样本 · ← 返回 · ? 全部快捷键",
    class_head: "该论断的诊断类别（由你判断）：各类别决定所有诊断分数",
    judge_class: "评审的类别",
    keyline_sample: "快捷键：y 1 · p ½ · n 0 · u 不确定 · e 备注 · Enter 下一个样本 · ← 返回 · " +
      "? 全部快捷键",
    keyline_review: "快捷键：a 接受 · r 拒绝（输入理由，Enter）· e 编辑（Ctrl+Enter 保存）· " +
      "→/← 下/上一行 · ? 全部快捷键",
    orders_help: "校正估计只使用随机顺序的标注：请从头依次标注。信息量顺序先显示评审模型最没把握的样本，" +
      "其标注单独保存，用于拟合 τ 或验证头。每次标注都会立即写入标注文件。",
    keys_run: [
      ["j / ↓", "下一条论断"], ["k / ↑", "上一条论断"], ["y", "有依据（样本：1）"],
      ["n", "无依据（样本：0）"], ["p", "½（无论断的样本）"], ["u", "不确定"],
      ["e", "为当前论断写备注；Enter 保存"], ["Enter / →", "下一个样本（需要时为确认）"],
      ["←", "上一个样本"], ["o", "切换顺序"], ["?", "显示或隐藏快捷键"],
    ],
    keys_class: [
      ["j / ↓", "下一条论断"], ["k / ↑", "上一条论断"], ["1, 2, …", "论断的类别，按按钮顺序"],
      ["u", "不确定"], ["e", "为当前论断写备注；Enter 保存"],
      ["Enter / →", "下一个样本（需要时为确认）"], ["←", "上一个样本"], ["o", "切换顺序"],
      ["?", "显示或隐藏快捷键"],
    ],
    keys_review: [
      ["a", "接受该行"], ["r", "拒绝：输入理由后按 Enter"],
      ["e", "编辑问题或参考答案；Ctrl+Enter 保存，Esc 取消"],
      ["→ / ←", "下一行 / 上一行"], ["?", "显示或隐藏快捷键"],
    ],
  },
};

const UNITS = {
  en: { turns: "turns", conversations: "conversations" },
  zh: { turns: "个轮次", conversations: "个对话" },
};
// what the mean is over: the turns of conversations, whole conversations, or samples
function unitName(iv) { return UNITS[lang][iv.unit] || (lang === "zh" ? "个样本" : "samples"); }

function f3(x) { return x === null || x === undefined ? "—" : Number(x).toFixed(3); }
function ci(pair) { return pair ? `[${f3(pair[0])}, ${f3(pair[1])}]` : ""; }
const $ = (id) => document.getElementById(id);
function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

let lang = "en";
let state = null;   // the server's /api/state
let item = null;    // the sample (or row) shown
let metric = null;
let order = "random";
let pos = 0;
let focus = 0;      // the focused claim
let editing = false;
const t = (key) => T[lang][key];
// a saving line in the words of the page: a test set's review says "decision" for "mark"
const ts = (key) => (state && state.kind === "review" && T[lang][`${key}_review`]) || t(key);

// Saving. A mark (a review's decision alike) is "saved" only when the server answered 200, which
// it does once the row is fsynced in the labels (decisions) file. Until then it waits in
// `pending` (kept in localStorage too, so a reload or a restarted server on the same port gets
// it): shown as not saved, sent again. Each carries an id made once (client_id), so one sent
// again after a request that timed out yet was written is not written twice.
let requestTimeout = 8000;  // ms: a call with no answer by then has failed
let retryEvery = 2000;      // ms between attempts to send the marks waiting
let pending = [];           // marks (decisions) not known to be on disk, oldest first
let save = { status: "idle", why: "" };
const savedMarks = [];      // every mark the server confirmed (what the page called saved)
let retryTimer = null;
let flushing = null;
let attempts = 0;           // marks sent so far, answered or not

class CallError extends Error {
  constructor(kind, message) { super(message); this.kind = kind; }
}

async function api(path, body) {
  // kind of a failure: "network" (unreachable), "timeout", "token" (403: restarted server),
  // "server" (5xx: e.g. the labels file cannot be written) or "refused" (400: a bad mark)
  const headers = { "X-Localeval-Token": TOKEN };
  const opts = body === undefined ? { headers } : {
    method: "POST", headers: { ...headers, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  };
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), requestTimeout);
  let response;
  let data = null;
  try {
    response = await fetch(path, { ...opts, signal: abort.signal });
    try { data = await response.json(); } catch (err) { data = null; }
  } catch (err) {
    throw abort.signal.aborted ? new CallError("timeout", t("no_answer")(requestTimeout / 1000))
      : new CallError("network", t("unreachable"));
  } finally {
    clearTimeout(timer);
  }
  if (!response.ok) {
    const message = (data && data.error) || `${response.status} ${response.statusText}`;
    if (response.status === 403) throw new CallError("token", t("token_changed"));
    throw new CallError(response.status >= 500 ? "server" : "refused", message);
  }
  if (data === null) throw new CallError("server", `${path}: the answer is not JSON`);
  return data;
}

function labelName(m) {
  if (m.label === null) return t("unsure");
  if (m.class) return (t("classes")[m.class] || m.class).split(/[:：]/)[0];
  if (m.claim === null) return m.label === 1 ? t("right") : m.label === 0 ? t("wrong") : t("partly");
  return m.label >= 0.5 ? t("supported") : t("not_supported");
}

function clientId() {
  // a mark's own id, made once: the server writes a mark sent again (its first request timed
  // out, yet was written) only once
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

const sameKey = (a, b) => a.id === b.id && (state.kind === "review" ||
  (a.metric === b.metric && a.claim === b.claim));
const pendingKey = () => state.kind === "review" ? `localeval-review-pending:${state.testset}`
  : `localeval-label-pending:${state.run}`;
const sendTo = () => state.kind === "review" ? "/api/decide" : "/api/mark";

function queue(m) {
  // the newest mark (decision) of its claim (row) replaces one still waiting
  pending = pending.filter((p) => !sameKey(p, m));
  pending.push(m);
  storePending();
}

function storePending() {
  try {
    if (pending.length) localStorage.setItem(pendingKey(), JSON.stringify(pending));
    else localStorage.removeItem(pendingKey());
  } catch (err) { /* storage full or off: the marks stay in this tab */ }
}

function loadPending() {
  try {
    const kept = JSON.parse(localStorage.getItem(pendingKey()) || "[]");
    return Array.isArray(kept) ? kept : [];
  } catch (err) { return []; }
}

function pendingFor(sid, key) {
  if (state.kind === "review") return pending.find((d) => d.id === sid);
  const claim = key === "sample" ? null : Number(key);
  return pending.find((m) => m.metric === metric && m.id === sid && m.claim === claim);
}

function setSave(status, why, kind) {
  save = { status, why: (why || "").replace(/^not saved: /, ""), kind: kind || "" };
  renderSave();
}

function renderSave() {
  const box = $("save");
  if (!box || !state) return;
  box.hidden = save.status === "idle";
  box.className = `save s-${save.status}`;
  box.dataset.status = save.status;
  box.replaceChildren();
  const text = {
    saving: () => t("saving"),
    saved: () => ts("saved")(state.kind === "review" ? state.decisions_file : state.labels_file),
    reconnected: () => ts("reconnected")(save.resent),
    unsaved: () => `${ts("unsaved")(pending.length, save.why)} ` +
      (save.kind === "server" ? t("server_hint") : ts("unsaved_hint")),
    restarted: () => ts("restarted")(pending.length),
    refused: () => t("refused")(save.why),
  }[save.status];
  if (!text) return;
  box.append(el("span", "", text()));
  if (save.status === "unsaved") {
    const b = el("button", "send", t("send_now"));
    b.type = "button";
    b.addEventListener("click", () => guarded(send));
    box.append(" ", b);
  }
  if (pending.length && save.status !== "saving") {
    const list = el("ul", "pending small");
    list.append(...pending.map((m) => el("li", "", ts("pending_one")(m))));
    box.append(list);
  }
}

function scheduleRetry() {
  clearTimeout(retryTimer);
  retryTimer = pending.length ? setTimeout(sendQuietly, retryEvery) : null;
}

async function send() {
  // the marks waiting sent, then the page shows the server's copy of what is saved
  if (await flush()) await afterSaved();
}

function sendQuietly() {
  // a retry of its own accord: an error shown stays; one of its own is shown
  send().catch(showError);
}

async function flush() {
  // send the marks waiting, oldest first; stop at the first that fails for want of a server
  if (flushing) return flushing;
  clearTimeout(retryTimer);
  flushing = (async () => {
    const resending = save.status === "unsaved" || save.status === "restarted" || save.resume;
    let sent = 0;
    while (pending.length) {
      const m = pending[0];
      setSave("saving");
      attempts += 1;
      try {
        await api(sendTo(), m);
      } catch (err) {
        if (err.kind === "refused") {  // this mark is wrong, not the server away: said, dropped
          pending.shift();
          storePending();
          setSave("refused", err.message);
          continue;
        }
        setSave(err.kind === "token" ? "restarted" : "unsaved", err.message, err.kind);
        if (err.kind !== "token") scheduleRetry();
        return false;
      }
      pending.shift();
      storePending();
      savedMarks.push(m);
      sent += 1;
    }
    if (save.status === "refused") return true;
    setSave(resending && sent ? "reconnected" : "saved");
    save.resent = sent;
    renderSave();
    return true;
  })();
  try {
    return await flushing;
  } finally {
    flushing = null;
  }
}

async function afterSaved() {
  // the server's view of the sample (row) and the progress, once the marks are on disk; kept
  // only while the page still shows that sample (a move meanwhile fetched its own)
  const review = state.kind === "review";
  const at = [pos, metric, order];
  const now = await api(review ? "/api/state"
    : `/api/state?metric=${encodeURIComponent(metric)}`);
  const shown = item && at[0] < now.total ? await api(review ? `/api/item?pos=${at[0]}`
    : `/api/item?metric=${encodeURIComponent(at[1])}&order=${at[2]}&pos=${at[0]}`) : item;
  if (pos !== at[0] || metric !== at[1] || order !== at[2]) return;
  state = now;
  item = shown;
  render();
}

function showError(err) {
  const box = $("error");
  box.hidden = !err;
  box.textContent = err ? String(err.message || err) : "";
}

async function guarded(work) {
  try {
    showError(null);
    await work();
  } catch (err) {
    showError(err);
  }
}

// ---- language --------------------------------------------------------------------------------

function applyLanguage() {
  document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
  for (const node of document.querySelectorAll("[data-t]")) node.textContent = t(node.dataset.t);
  $("lang").textContent = lang === "zh" ? "English" : "中文";
  $("reason").placeholder = t("reason_ph");
  const keys = $("keys");
  keys.replaceChildren();
  const list = state && state.kind === "review" ? "keys_review"
    : state && state.classes ? "keys_class" : "keys_run";
  for (const [k, what] of t(list)) {
    const tr = el("tr");
    tr.append(el("th", "", k), el("td", "", what));
    keys.append(tr);
  }
  $("accept").textContent = t("accept");
  $("reject").textContent = t("reject");
  $("edit").textContent = t("edit");
}

$("lang").addEventListener("click", () => {
  lang = lang === "zh" ? "en" : "zh";
  localStorage.setItem("localeval-label-lang", lang);
  applyLanguage();
  render();
});
$("help-toggle").addEventListener("click", () => { $("help").hidden = !$("help").hidden; });

// ---- run: header -----------------------------------------------------------------------------

function renderHeader() {
  $("keyline").textContent = state.classes ? t("keyline_class")(state.classes)
    : t(state.kind === "review" ? "keyline_review"
      : state.claims ? "keyline_run" : "keyline_sample");
  if (state.kind === "review") {
    $("where").textContent = `${t("review_title")} · ${state.testset}`;
    $("progress").textContent = t("review_progress")(state);
  } else {
    $("where").textContent = state.run;
    $("progress").textContent = t("progress")(state);
    for (const b of document.querySelectorAll("button.order")) {
      const o = b.dataset.order;
      b.textContent = o === "random" ? t("order_random")(state.seed) : t("order_informative");
      b.classList.toggle("on", o === order);
    }
    const iv = state.interval;
    const box = $("interval");
    box.hidden = !iv;
    if (iv) {
      box.textContent = iv.mean === undefined ? t("interval_wait")(iv) + (
        iv.problem ? ` · ${iv.problem}` : "") : t("interval")(state.score_key || state.metric, iv);
      if (iv.unsure) box.textContent += t("unsure_drawn")(iv);
    }
  }
  const notes = $("notes");
  notes.replaceChildren(...(state.notes || []).map((n) => el("p", "note", n)));
}

// ---- run: one sample -------------------------------------------------------------------------

function markClass(mark) {
  if (!mark) return "";
  if (mark.label === null) return "m-unsure";
  if (state.classes) return `m-class d-${mark.class}`;
  return mark.label >= 0.75 ? "m-yes" : mark.label <= 0.25 ? "m-no" : "m-partly";
}

function markChoices() {
  // [label sent, text, button class, key]: a claim's support, or its diagnosis class (a class
  // label: the class's name is sent, null for unsure)
  if (!state.classes) {
    return [[1, t("supported"), "yes", "y"], [0, t("not_supported"), "no", "n"],
            [null, t("unsure"), "unsure", "u"]];
  }
  return [...state.classes.map((c, n) => [c, (t("classes")[c] || c).split(/[:：]/)[0],
                                          `cls d-${c}`, String(n + 1)]),
          [null, t("unsure"), "unsure", "u"]];
}

function chosen(mark, label) {
  if (!mark) return false;
  return state.classes && label !== null ? mark.class === label : mark.label === label;
}

function claimButtons(i, mark) {
  const box = el("div", "buttons");
  for (const [label, text, cls, k] of markChoices()) {
    const b = el("button", `mark ${cls}`, `${text} (${k})`);
    b.type = "button";
    b.dataset.claim = String(i);
    b.dataset.label = JSON.stringify(label);
    if (chosen(mark, label)) b.classList.add("chosen");
    b.addEventListener("click", (ev) => {
      ev.stopPropagation();
      focus = i;
      guarded(() => mark_(i, label));
    });
    box.append(b);
  }
  const note = el("input", "note");
  note.type = "text";
  note.maxLength = 500;
  note.placeholder = t("note");
  note.id = `note-${i}`;
  note.value = (mark && mark.note) || "";
  note.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" || ev.key === "Escape") {
      ev.preventDefault();
      const saved = pendingFor(item.id, String(i)) || item.marks[String(i)];
      note.blur();
      if (ev.key === "Enter" && saved && note.value !== (saved.note || "")) {
        guarded(() => mark_(i, state.classes && saved.label !== null
          ? (saved.class || saved.label) : saved.label));
      }
    }
  });
  box.append(note);
  return box;
}

function renderSample() {
  $("review").hidden = true;
  const done = state.total === 0 || pos >= state.total;
  $("sample").hidden = done;
  $("done").hidden = !done;
  if (done) {
    $("done").textContent = order === "random" ? t("random_done") : t("informative_done");
    return;
  }
  if (!item) return;
  $("position").textContent = t("sample_of")(pos + 1, state.total, item.id);
  $("question").textContent = item.question || "—";
  renderHistory();
  $("truth-box").hidden = !item.ground_truth;
  $("truth").textContent = item.ground_truth || "";
  const judge = $("judge");
  judge.replaceChildren();
  const scoreText = `${t("judge")} ${state.score_key || state.metric} ${t("score")} ` +
    `${f3(item.score)}` +
    (item.weighted !== null && item.weighted !== undefined
      ? ` · ${t("weighted")} ${f3(item.weighted)}` : "") +
    (item.tau !== null && item.tau !== undefined ? ` · τ ${item.tau}` : "");
  judge.append(el("span", "", scoreText));
  const banner = $("banner");
  banner.hidden = true;
  banner.replaceChildren();
  if (order === "random" && item.status === "informative") {
    banner.hidden = false;
    const b = el("button", "confirm", t("confirm_button"));
    b.type = "button";
    b.addEventListener("click", () => guarded(confirm_));
    banner.append(el("span", "", t("confirm") + " "), b);
  } else if (order === "informative" && item.status === "random") {
    banner.hidden = false;
    banner.append(el("span", "", t("correction")));
  }
  if (state.claims) renderClaims(); else renderGrade();
  renderContexts();
  $("prev").disabled = pos === 0;
}

function renderHistory() {
  // a conversation's turn: the conversation before it, as a chat
  const box = $("history-box");
  box.hidden = !item.history;
  if (!item.history) return;
  $("history-head").textContent = t("history")(item.conversation, item.turn);
  $("history").replaceChildren(...item.history.map((m) => {
    const li = el("li", `msg ${m.role === "user" ? "user" : "assistant"}`);
    li.append(el("span", "who small muted", `${t("role")[m.role] || m.role}: `),
              el("span", "", m.content));
    return li;
  }));
}

function renderClaims() {
  const truth = state.metric === "context_recall" || state.metric === "diagnosis.truth_claims";
  $("answer-head").textContent = t(truth ? "truth_claims" : "answer_claims");
  $("answer").hidden = truth || !item.answer;
  $("answer").textContent = item.answer || "";
  $("grade").hidden = true;
  const list = $("claims");
  list.hidden = false;
  list.replaceChildren();
  for (const c of item.claims) {
    const waiting = pendingFor(item.id, String(c.i));
    const mark = waiting || item.marks[String(c.i)];
    const li = el("li", `claim ${markClass(mark)}${waiting ? " m-pending" : ""}` +
      `${c.i === focus ? " focus" : ""}`);
    li.dataset.claim = String(c.i);
    li.append(el("div", "ctext", c.text));
    const verdict = el("div", "verdict small");
    const ok = c.verdict === 1;
    if (!state.classes) {  // a class label's claim has no support verdict: its class below
      verdict.append(el("span", ok ? "ok" : "bad", ok ? "✓" : "✗"),
                     el("span", "", ` ${t("judge")}: ${ok ? t("judge_yes") : t("judge_no")}`));
    }
    if (c.p !== null && c.p !== undefined) verdict.append(el("span", "p", ` · P ${f3(c.p)}`));
    if (c.rule === "check") verdict.append(el("span", "muted", ` · ${t("by_rule")}`));
    if (c.class) {
      const chip = el("span", `dclass d-${c.class}`,
                      `${t(state.classes ? "judge_class" : "diagnosis")}: ` +
                      `${t("classes")[c.class] || c.class}`);
      chip.dataset.class = c.class;
      verdict.append(" ", chip);
    }
    if (c.reason) {
      const d = el("details", "why");
      d.append(el("summary", "", t("why")), el("span", "", c.reason));
      verdict.append(d);
    }
    li.append(verdict);
    if (c.evidence && (item.contexts === null || !c.evidence_found)) {
      li.append(el("div", "evidence small", `${t("evidence_text")} ${c.evidence}`));
    }
    if (mark) {
      li.append(el("div", "yours small muted", `${t("your_mark")}: ` +
        `${mark.label === null ? t("unsure") : state.classes
          ? (t("classes")[mark.class] || mark.class) : mark.label >= 0.5 ? t("supported") :
            t("not_supported")} · ${t("drawn")(mark.order || "random")}` +
        (waiting ? ` · ${t("not_saved_tag")}` : "")));
    }
    li.append(claimButtons(c.i, mark));
    li.addEventListener("click", () => { focus = c.i; updateFocus(); });
    list.append(li);
  }
  const all = item.claims.every((c) => item.marks[String(c.i)]);
  if (all && item.status !== "informative") $("judge").append(el("p", "hint", t("all_marked")));
}

function renderGrade() {
  $("answer-head").textContent = t("answer_sample");
  $("answer").hidden = true;
  $("claims").hidden = true;
  const box = $("grade");
  box.hidden = false;
  box.replaceChildren();
  box.append(el("p", "text", item.answer || "—"));
  if (item.reason) box.append(el("p", "small muted", item.reason));
  box.append(el("p", "small", t("grade_hint")(state.metric, state.description)));
  const waiting = pendingFor(item.id, "sample");
  const mark = waiting || item.marks.sample;
  box.classList.toggle("m-pending", Boolean(waiting));
  if (waiting) box.append(el("p", "small pending-tag", t("not_saved_tag")));
  const buttons = el("div", "buttons");
  for (const [label, key, cls, k] of [[1, "right", "yes", "y"], [0.5, "partly", "partly", "p"],
                                      [0, "wrong", "no", "n"], [null, "unsure", "unsure", "u"]]) {
    const b = el("button", `mark ${cls}`, `${t(key)} (${k})`);
    b.type = "button";
    b.dataset.label = JSON.stringify(label);
    if (mark && mark.label === label) b.classList.add("chosen");
    b.addEventListener("click", () => guarded(() => mark_(null, label)));
    buttons.append(b);
  }
  const note = el("input", "note");
  note.type = "text";
  note.id = "note-sample";
  note.maxLength = 500;
  note.placeholder = t("note");
  note.value = (mark && mark.note) || "";
  buttons.append(note);
  box.append(buttons);
}

function renderContexts() {
  const box = $("contexts");
  box.replaceChildren();
  if (!item.contexts) {
    box.append(el("p", "muted", `${t("no_context")}: ${item.context_note || ""}`));
    return;
  }
  item.contexts.forEach((segs, n) => {
    const div = el("div", "ctx");
    div.append(el("span", "ctx-num", `[${n + 1}]`));
    for (const s of segs) {
      const span = el("span", "", s.t);
      if (s.c) { span.classList.add("ev-c"); span.dataset.c = s.c.join(" "); }
      if (s.p) { span.classList.add("ev-p"); span.dataset.p = s.p.join(" "); }
      div.append(span);
    }
    box.append(div);
  });
  updateFocus();
}

function updateFocus() {
  for (const li of document.querySelectorAll("#claims li")) {
    li.classList.toggle("focus", Number(li.dataset.claim) === focus);
  }
  let first = null;
  for (const span of document.querySelectorAll("#contexts span[data-c], #contexts span[data-p]")) {
    const c = (span.dataset.c || "").split(" ").includes(String(focus));
    const p = (span.dataset.p || "").split(" ").includes(String(focus));
    span.classList.toggle("focus-c", c);
    span.classList.toggle("focus-p", p);
    if (c && !first) first = span;
  }
  const li = document.querySelector(`#claims li[data-claim="${focus}"]`);
  if (li) scrollWithin(li, null);
  if (first) scrollWithin(first, $("contexts").parentElement);
}

function scrollWithin(node, box) {
  // keep the node in view: in its own scrolling column (wide screens), else in the window
  const r = node.getBoundingClientRect();
  if (box && box.scrollHeight > box.clientHeight + 4) {
    const b = box.getBoundingClientRect();
    if (r.top < b.top || r.bottom > b.bottom) box.scrollTop += r.top - b.top - 40;
  } else if (!box && (r.top < 0 || r.bottom > window.innerHeight)) {
    window.scrollBy(0, r.top - window.innerHeight / 3);
  }
}

function firstOpen() {
  // the first claim not marked yet (a reopened page carries on where it was left)
  const open = item && item.claims.find((c) => !isMarked(c.i));
  return open ? open.i : 0;
}

async function loadItem() {
  if (pos >= state.total) { item = null; render(); return; }
  item = await api(`/api/item?metric=${encodeURIComponent(metric)}&order=${order}&pos=${pos}`);
  focus = firstOpen();
  render();
}

async function refresh() {
  state = await api(`/api/state?metric=${encodeURIComponent(metric)}`);
}

function isMarked(i) {
  return Boolean(item.marks[String(i)] || pendingFor(item.id, String(i)));
}

async function mark_(claim, label) {
  // queued first (shown as not saved), then sent; the content it judged goes with it, so the
  // server refuses it if the sample changed since the page showed it
  const noteBox = $(claim === null ? "note-sample" : `note-${claim}`);
  const note = noteBox ? noteBox.value : null;
  const m = { metric, order, id: item.id, claim, label, note, input_hash: item.input_hash,
              client_id: clientId() };
  if (claim !== null) m.statement = item.claims[claim].text;
  if (state.classes && label !== null) m.class = label;  // shown as the saved mark shows it
  if (item.turn) m.turn_text = item.answer;  // a conversation's turn: bound to its reply too
  queue(m);
  if (claim !== null) {
    const open = item.claims.find((c) => c.i > claim && !isMarked(c.i)) ||
      item.claims.find((c) => !isMarked(c.i));
    focus = open ? open.i : Math.min(claim + 1, item.claims.length - 1);
  }
  render();
  if (await flush()) await afterSaved();
}

async function confirm_() {
  state = await api("/api/confirm", { metric, id: item.id });
  await loadItem();
}

function labelledInFull() {
  if (!item) return false;
  return item.status === "random" || item.status === "informative";
}

async function go(step) {
  if (step > 0 && pending.length) {
    flush();
    throw new Error(t("wait_saved"));
  }
  if (step > 0) {
    if (order === "random" && item && item.status !== "random") {
      if (item.status === "informative") { await confirm_(); return; }
      throw new Error(state.claims ? t("mark_first") : t("grade_first"));
    }
    if (pos + 1 > state.total) return;
    pos += 1;
  } else {
    if (pos === 0) return;
    pos -= 1;
  }
  focus = 0;
  await refresh();
  await loadItem();
}

async function switchOrder(to) {
  order = to;
  await refresh();
  pos = Math.min(order === "random" ? state.frontier : state.informative_start,
                 Math.max(state.total - 1, 0));
  if (order === "random" && state.frontier >= state.total) pos = state.total;
  focus = 0;
  await loadItem();
}

for (const b of document.querySelectorAll("button.order")) {
  b.addEventListener("click", () => guarded(() => switchOrder(b.dataset.order)));
}
$("prev").addEventListener("click", () => guarded(() => go(-1)));
$("next").addEventListener("click", () => guarded(() => go(1)));
$("metric").addEventListener("change", () => guarded(async () => {
  metric = $("metric").value;
  await switchOrder(order);
  applyLanguage();  // the keys of the new metric's marks
}));

function runKeys(ev) {
  const n = item && state.claims ? item.claims.length : 0;
  const k = ev.key;
  if (k === "ArrowRight" || k === "Enter") return go(1);
  if (k === "ArrowLeft") return go(-1);
  if (k === "o") return switchOrder(order === "random" ? "informative" : "random");
  if (!item || pos >= state.total) return null;
  if (state.claims) {
    if (k === "j" || k === "ArrowDown") { focus = Math.min(focus + 1, n - 1); updateFocus(); return null; }
    if (k === "k" || k === "ArrowUp") { focus = Math.max(focus - 1, 0); updateFocus(); return null; }
    const labels = state.classes
      ? Object.fromEntries([...state.classes.map((c, n) => [String(n + 1), c]), ["u", null]])
      : { y: 1, n: 0, u: null };
    if (k in labels) return mark_(focus, labels[k]);
    if (k === "e") { const box = $(`note-${focus}`); if (box) box.focus(); return null; }
  } else {
    const labels = { y: 1, p: 0.5, n: 0, u: null };
    if (k in labels) return mark_(null, labels[k]);
    if (k === "e") { $("note-sample").focus(); return null; }
  }
  return null;
}

// ---- review of a test set --------------------------------------------------------------------

function renderReview() {
  $("sample").hidden = true;
  $("write-box").hidden = false;  // the kept test set can be written at any row and past the last
  const done = pos >= state.total;
  $("review").hidden = done || !item;
  $("done").hidden = !done;
  if (done) {
    $("done").textContent = t("review_progress")(state);
    return;
  }
  if (!item) return;
  const row = item.row;
  const waiting = pendingFor(row.id);
  const made = waiting || item.decision;
  $("rposition").textContent = t("row_of")(pos + 1, state.total, row.id);
  $("rmeta").textContent = [row.kind, row.language, row.source, row.link]
    .filter(Boolean).join(" · ");
  const q = made && made.question ? made.question : row.question;
  const a = made && made.ground_truth ? made.ground_truth : row.ground_truth;
  $("rquestion").textContent = q || "—";
  $("rtruth").textContent = a || "—";
  const box = $("rdecision");
  box.hidden = !made;
  box.className = `banner ${made ? "d-" + made.decision : ""}${waiting ? " m-pending" : ""}`;
  box.textContent = made ? t("decided")[made.decision] + (made.reason ? `: ${made.reason}` : "") +
    (waiting ? ` · ${t("not_saved_tag")}` : "") : "";
  const ctx = $("rcontexts");
  const refs = row.reference_contexts || [];
  ctx.replaceChildren();
  if (!refs.length) ctx.append(el("p", "muted", "—"));
  ctx.append(...refs.map((c, n) => {
    const div = el("div", "ctx");
    div.append(el("span", "ctx-num", `[${n + 1}] ${(row.expected_ids || [])[n] || ""}`),
               el("span", "", c));
    return div;
  }));
  setEditing(false);
  $("reason-box").hidden = true;
  $("rprev").disabled = pos === 0;
}

function setEditing(on) {
  editing = on;
  $("equestion").hidden = !on;
  $("etruth").hidden = !on;
  $("rquestion").hidden = on;
  $("rtruth").hidden = on;
  $("edit-box").hidden = !on;
  if (on) {
    $("equestion").value = $("rquestion").textContent;
    $("etruth").value = $("rtruth").textContent === "—" ? "" : $("rtruth").textContent;
    $("equestion").focus();
  }
}

async function decide(decision, extra) {
  // queued first (shown as not saved), then sent, bound to the row's hash: the server refuses
  // it if the row changed since the page showed it; the next row opens either way
  queue({ id: item.row.id, decision, ...extra, input_hash: item.row.input_hash,
          client_id: clientId() });
  render();
  if (await flush()) state = await api("/api/state");
  await reviewGo(1);
}

async function reviewGo(step) {
  const to = Math.max(0, Math.min(pos + step, state.total));
  const next = to < state.total ? await api(`/api/item?pos=${to}`) : null;
  pos = to;
  item = next;
  render();
}

$("accept").addEventListener("click", () => guarded(() => decide("accept", {})));
$("reject").addEventListener("click", () => {
  $("reason-box").hidden = false;
  $("reason").value = "";
  $("reason").focus();
});
$("reason-save").addEventListener("click", () => guarded(
  () => decide("reject", { reason: $("reason").value })));
$("reason").addEventListener("keydown", (ev) => {
  if (ev.key === "Enter") {
    ev.preventDefault();
    guarded(() => decide("reject", { reason: $("reason").value }));
  } else if (ev.key === "Escape") {
    $("reason-box").hidden = true;
    $("reason").blur();
  }
});
$("edit").addEventListener("click", () => setEditing(true));
$("edit-cancel").addEventListener("click", () => setEditing(false));
function saveEdit() {
  return guarded(() => decide("edit", { question: $("equestion").value,
                                        ground_truth: $("etruth").value }));
}
$("edit-save").addEventListener("click", saveEdit);
for (const id of ["equestion", "etruth"]) {
  $(id).addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); saveEdit(); }
    if (ev.key === "Escape") { ev.preventDefault(); setEditing(false); }
  });
}
$("rprev").addEventListener("click", () => guarded(() => reviewGo(-1)));
$("rnext").addEventListener("click", () => guarded(() => reviewGo(1)));
$("write").addEventListener("click", () => guarded(async () => {
  if (pending.length && !(await flush())) throw new Error(ts("wait_saved"));
  const wrote = await api("/api/write", { unreviewed: $("unreviewed").checked });
  state = wrote;
  $("written").textContent = t("wrote")(wrote);
  renderHeader();
}));

function reviewKeys(ev) {
  const k = ev.key;
  if (k === "ArrowRight") return reviewGo(1);
  if (k === "ArrowLeft") return reviewGo(-1);
  if (!item) return null;
  if (k === "a") return decide("accept", {});
  if (k === "r") { ev.preventDefault(); $("reject").click(); return null; }
  if (k === "e") { ev.preventDefault(); setEditing(true); return null; }
  return null;
}

// ---- both ------------------------------------------------------------------------------------

document.addEventListener("keydown", (ev) => {
  const tag = (ev.target && ev.target.tagName) || "";
  if (["INPUT", "TEXTAREA", "SELECT"].includes(tag) || ev.ctrlKey || ev.metaKey || ev.altKey) {
    return;
  }
  if (ev.key === "?") { $("help").hidden = !$("help").hidden; return; }
  if (!state) return;
  const handled = ["ArrowRight", "ArrowLeft", "ArrowUp", "ArrowDown", "Enter"].includes(ev.key);
  if (handled) ev.preventDefault();
  guarded(async () => { await (state.kind === "review" ? reviewKeys(ev) : runKeys(ev)); });
});

function render() {
  renderHeader();
  renderSave();
  if (state.kind === "review") renderReview(); else renderSample();
}

async function start() {
  state = await api("/api/state");
  lang = localStorage.getItem("localeval-label-lang") || state.language || "en";
  pending = loadPending();  // marks (decisions) a page on this port could not send before
  if (pending.length) {
    save.resume = true;
    if (await flush()) state = await api("/api/state");
    save.resume = false;
  }
  if (state.kind === "review") {
    pos = Math.min(state.start, state.total);
    item = pos < state.total ? await api(`/api/item?pos=${pos}`) : null;
  } else {
    metric = state.metric;
    const select = $("metric");
    select.replaceChildren(...state.metrics.map((m) => {
      const o = el("option", "", m.name);
      o.value = m.name;
      return o;
    }));
    select.value = metric;
    $("metric-box").hidden = state.metrics.length < 2;
    $("orders").hidden = false;
    pos = state.frontier;
    if (pos < state.total) {
      item = await api(`/api/item?metric=${encodeURIComponent(metric)}&order=${order}&pos=${pos}`);
      focus = firstOpen();
    }
  }
  applyLanguage();
  render();
  document.body.dataset.ready = "1";
}

window.addEventListener("online", () => { if (pending.length) sendQuietly(); });

guarded(start);
