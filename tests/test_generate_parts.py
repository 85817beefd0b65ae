"""The pure steps of `localeval generate`: chunking, reading, the filters and the tidying."""

from __future__ import annotations

from localeval.generate.assemble import casual_form, retype
from localeval.generate.chunking import chunk_document, estimate_tokens
from localeval.generate.documents import Document, html_text
from localeval.generate.drafting import first_clause, first_question, without_questions
from localeval.generate.filters import answer_in_question, content_share, self_contained
from localeval.generate.picking import Pair, pick_pairs
from localeval.models.embed import HashEmbedder
from localeval.text import split_sentences

EN = """# Bell Rock

The Bell Rock Lighthouse stands off Angus. It was built between 1807 and 1810 by Robert Stevenson.

Its light was first lit on 1 February 1811. The tower is 35 metres tall.

# Keepers

Three keepers lived in the tower. The light was automated in 1988."""
ZH = ("大熊猫是中国特有的哺乳动物，主要生活在四川、陕西和甘肃的山区。"
      "大熊猫的食物百分之九十九是竹子。"
      "一只成年大熊猫每天要花十多个小时进食，吃掉十二到三十八公斤的竹子。"
      "大熊猫的寿命在野外约为二十年。")


def test_chunks_keep_sentences_whole_start_at_headings_and_have_stable_ids() -> None:
    chunks = chunk_document(Document("guide/light.md", EN), max_tokens=40, language="auto")
    assert [c.id for c in chunks] == [f"guide/light.md#{i}" for i in range(1, len(chunks) + 1)]
    sentences = set(split_sentences(EN))
    for c in chunks:
        assert set(split_sentences(c.text)) <= sentences  # no sentence cut in two
        assert c.tokens <= 40 or len(split_sentences(c.text)) == 1
    assert any(c.text.startswith("# Keepers") for c in chunks)
    assert chunks == chunk_document(Document("guide/light.md", EN), max_tokens=40, language="auto")


def test_chinese_without_spaces_is_cut_at_sentence_ends() -> None:
    chunks = chunk_document(Document("panda.txt", ZH), max_tokens=30, language="auto")
    assert len(chunks) > 1 and {c.language for c in chunks} == {"zh"}
    assert "".join(c.text for c in chunks) == ZH
    assert all(c.text.endswith("。") for c in chunks)
    assert estimate_tokens(ZH) > 30


def test_a_users_chunk_is_kept_as_it_is() -> None:
    (chunk,) = chunk_document(Document("c.jsonl", EN, chunk_id="doc-7"), max_tokens=10,
                              language="en")
    assert chunk.id == "doc-7" and chunk.text == EN.strip()


def test_html_text_keeps_blocks_and_drops_scripts() -> None:
    text = html_text("<html><head><title>T</title><style>p{}</style></head><body><h2>Head"
                     "</h2><p>One &amp; two.</p><script>x()</script><p>Three.</p></body></html>")
    assert text.split("\n\n") == ["# Head", "One & two.", "Three."]


def test_self_contained_and_answer_in_question() -> None:
    for bad in ("What does the passage say about bees?", "According to the author, why?",
                "文中提到的大熊猫吃什么？", "本文介绍了哪座书院？"):
        assert not self_contained(bad), bad
    for good in ("When was the Bell Rock Lighthouse built?", "大熊猫每天吃多少竹子？"):
        assert self_contained(good), good
    assert answer_in_question("Was the tower built in 1810?", "The tower was built in 1810.")
    assert not answer_in_question("When was the tower built?", "The tower was built in 1810.")
    assert answer_in_question("大熊猫的食物是竹子吗？", "竹子")
    assert answer_in_question("青琅湖边的二十多家客栈全部接入污水处理管网吗？",
                              "二十多家客栈接入污水处理管网。")  # 栈接 is no word of it
    assert not answer_in_question("江州博物馆每天限额多少人？", "江州博物馆每天限额八千人。")
    assert not answer_in_question("When was the Alder Street Chess Club founded?",
                                  "The Alder Street Chess Club was founded in 1962.")
    assert content_share("It opened in 1998 in Ashcombe.", ["Opened 1998, Ashcombe."]) == 1.0
    assert content_share("It opened in 1999.", ["It opened in 1998."]) == 0.5
    assert content_share("The club runs it.", ["It is run by the club."]) == 1.0  # a stem
    assert content_share("京沪高速铁路全长一千三百一十八公里。",  # no word break in Chinese
                         ["京沪高速铁路连接北京和上海，全长一千三百一十八公里。"]) == 1.0
    assert content_share("京沪高速铁路全长九百公里。", ["京沪高速铁路，全长一千三百公里。"]) < 1.0


def test_drafts_are_tidied_to_one_question() -> None:
    assert first_question("When is it held? What time? Where?") == "When is it held?"
    assert without_questions("How tall is it? It is 35 metres tall.") == "It is 35 metres tall."
    assert without_questions("It is tall. Is it?") == "It is tall. Is it?"
    assert first_clause("club nights when and where, what time") == "club nights when and where"
    assert first_clause("bell rock, height") == "bell rock, height"  # too little before it


def test_casual_form_is_fixed_by_its_key() -> None:
    a = casual_form("When was the Lighthouse automated?", "light.md#3", "en")
    assert a == casual_form("When was the Lighthouse automated?", "light.md#3", "en")
    assert not a.endswith("?") and a == a.lower()
    assert sorted(a) == sorted("when was the lighthouse automated")  # one swap, same letters
    assert a != "when was the lighthouse automated"
    assert casual_form("大熊猫吃什么？", "p#1", "zh") == "大熊猫吃什么"


def test_pairs_prefer_a_shared_rare_name() -> None:
    docs = [Document("a.md", "Robert Stevenson built the Bell Rock Lighthouse in 1810 at sea."),
            Document("b.md", "Bees make honey in hives kept by beekeepers in many countries."),
            Document("c.md", "Robert Stevenson was a Scottish engineer born in Glasgow in 1772.")]
    chunks = [c for d in docs for c in chunk_document(d, max_tokens=64, language="en")]
    vectors = HashEmbedder().encode([c.text for c in chunks])
    pairs = pick_pairs(chunks, vectors, seed=0, count=3)
    assert Pair(first="a.md#1", second="c.md#1", link="entity: Robert Stevenson") in pairs
    assert pick_pairs(chunks, vectors, seed=0, count=3) == pairs


def test_a_name_with_accented_letters_or_inside_chinese_text_links_a_pair() -> None:
    """picking.terms finds "Tomas Hrubý" whole (not "Tomas Hrub") and a Latin name right after a
    Chinese character; a name that links two documents may have accented letters."""
    from localeval.generate.chunking import Chunk
    from localeval.generate.picking import linking_name, terms

    text = "Tomas Hrubý won at Blålon. 江州的Severn Gate Bridge很长。"
    found = terms(Chunk(id="a#1", text=text, source="a", language="en", tokens=20))
    assert {"Tomas Hrubý", "Blålon", "Severn Gate Bridge"} <= found
    assert "Tomas Hrub" not in found and "Gate Bridge" not in found
    assert linking_name("Tomas Hrubý") and linking_name("Blålon")
    assert not linking_name("江州的") and not linking_name("Monday")
    docs = [Document("a.md", "Tomas Hrubý won the Pryce Memorial in 2023 with six points."),
            Document("b.md", "Bees make honey in hives kept by beekeepers in many countries."),
            Document("c.md", "Tomas Hrubý teaches chess to children on Saturday mornings.")]
    chunks = [c for d in docs for c in chunk_document(d, max_tokens=64, language="en")]
    pairs = pick_pairs(chunks, HashEmbedder().encode([c.text for c in chunks]), seed=0, count=3)
    assert Pair(first="a.md#1", second="c.md#1", link="entity: Tomas Hrubý") in pairs


def test_questions_naming_what_their_chunk_lacks_or_not_asking_are_caught() -> None:
    from localeval.generate.filters import is_question, names_outside

    chunk = ["Construction of the Severn Gate Bridge took four years."]
    assert names_outside("What happened during the construction of the Eiffel Tower?",
                         chunk) == ["Eiffel", "Tower"]
    assert names_outside("How long did the Severn Gate Bridge take to build?", chunk) == []
    assert names_outside("石鼓书院的GPS坐标是什么？", ["石鼓书院位于衡阳。"]) == ["GPS"]
    assert is_question("大熊猫吃什么？") and not is_question("云岭茶园的肉桂获奖了。")


def test_questions_asking_two_things_or_naming_no_subject_are_caught() -> None:
    from localeval.generate.filters import two_things
    from localeval.generate.subjects import names_subject, subject_terms

    assert two_things("When and where are club nights held?")
    assert two_things("How long did it take to build the towers and how much did it cost?")
    assert two_things("What is the fare for a foot passenger and what is the fare for a car?")
    assert two_things("When were tolls abolished, and how many vehicles cross daily?")
    assert two_things("What do a foot passenger, a bicycle, and a car pay?")  # a list
    assert two_things("半岛咖啡馆什么时候开门，每周哪天休息？")
    assert two_things("云岭茶园做青需要多久，老师傅根据香气判断火候？")  # asks, then states
    assert not two_things("半岛咖啡馆在夏季旅游旺季时，周末常常需要排队多久？")  # a condition first
    assert not two_things("In which city was the director of the film Heat born?")
    assert not two_things("三号线开通五年来，日均客流增长了多少？")
    terms = subject_terms({"light.md": EN, "panda.txt": ZH})
    assert {"bell", "rock", "stevenson"} <= terms["light.md"]  # title and names
    assert "大熊" in terms["panda.txt"]  # its first sentence names it
    assert names_subject("When was the Bell Rock Lighthouse automated?", terms["light.md"])
    assert not names_subject("Who won?", terms["light.md"])
    assert not names_subject("谁获奖了？", terms["panda.txt"])
    assert not names_subject("When was it built in 1810?", terms["light.md"])  # numbers: no
    assert not names_subject("When were the keepers replaced?", terms["light.md"])  # a common
    # noun of an English document names no subject, even one it repeats ("the course")
    plain = subject_terms({"note.txt": "the ferry leaves at noon. the ferry is slow."})
    assert names_subject("When does the ferry leave?", plain["note.txt"])  # no title, no name:
    # its first sentence's words


def test_an_unanswerable_question_restating_the_answered_one_is_caught() -> None:
    from localeval.generate.filters import restates

    assert restates("半岛咖啡馆的地址在哪里？", "半岛咖啡馆的地址是哪里？")
    assert restates("when did the severn gate bridge open", "When did the Severn Gate Bridge open?")
    assert not restates("Who paid for the Severn Gate Bridge?", "When did the Severn Gate "
                                                                  "Bridge open?")


def test_long_or_copied_or_cut_answers_and_example_names_are_caught() -> None:
    from localeval.generate.filters import first_failed, long_answer

    chunk = "The Bell Rock Lighthouse stands off Angus. It was built between 1807 and 1810."
    assert not long_answer("It was built between 1807 and 1810.", [chunk], "single", 240)
    assert long_answer(chunk, [chunk], "single", 240)  # copies its chunk
    assert long_answer("It was built " + "and rebuilt " * 15, [chunk], "single", 240)
    assert long_answer("x" * 240, [chunk], "single", 240)  # cut by the schema
    terms = {"bell", "rock", "lighthouse"}
    assert first_failed("unanswerable", "Who paid for the Eiffel Tower of Bell Rock?", None,
                        [chunk], terms, 240) == ("names_outside", ["Eiffel", "Tower"])
    assert first_failed("single", "When was the Bell Rock Lighthouse built?",
                        "It was built between 1807 and 1810.", [chunk], terms, 240) is None


def test_questions_must_be_worded_as_questions_and_colloquial_ones_not_state_the_answer() -> None:
    from localeval.generate.filters import adds_answer, asks, first_failed

    assert asks("How tall is the Eiffel Tower?") and asks("how tall eiffel tower")
    assert asks("In which year did the bridge open?") and asks("Is the library open on Sundays")
    assert asks("石鼓书院门票多少钱") and asks("大熊猫吃竹子吗") and asks("三号线几点开")
    assert not asks("Who paid tolls westbound direction car 2018?")  # a keyword string
    assert not asks("holm island harbour rebuild 2015 storm imogen old stone slipway")
    assert not asks("eiffel tower height") and not asks("In 1990 the bridge opened?")
    assert not asks("茶园主要产武夷岩茶") and not asks("石鼓书院门票四十元")
    assert first_failed("unanswerable", "Who paid tolls westbound direction car 2018?", None,
                        ["Tolls on the Severn bridge were abolished in 2018."], {"tolls"},
                        240) == ("not_a_question", "not worded as a question")
    assert adds_answer("石鼓书院门票四十元吗", "石鼓书院的门票是多少钱？", "石鼓书院门票四十元。")
    assert not adds_answer("石鼓书院门票多少钱", "石鼓书院的门票是多少钱？", "石鼓书院门票四十元。")
    assert adds_answer("how tall is eiffel tower 330", "How tall is the Eiffel Tower?",
                       "It is 330 metres tall.") == ["330"]


def test_pairs_link_only_chunks_that_share_a_subject() -> None:
    docs = [Document("a.md", "Robert Stevenson built the Bell Rock Lighthouse in 1810 at sea. "
                             "Its light was first lit on a Sunday in February."),
            Document("b.md", "Bees make honey in hives kept by beekeepers in many countries. "
                             "Hives are opened on a Sunday in February."),
            Document("c.md", "Robert Stevenson was a Scottish engineer born in Glasgow in 1772.")]
    chunks = [c for d in docs for c in chunk_document(d, max_tokens=64, language="en")]
    vectors = HashEmbedder().encode([c.text for c in chunks])
    pairs = pick_pairs(chunks, vectors, seed=0, count=6, per_chunk=2)
    assert pairs and all(p.link.startswith("entity: Robert") or p.first.split("#")[0] ==
                         p.second.split("#")[0] for p in pairs)
    assert not any("b.md" in (p.first + p.second) for p in pairs)  # "Sunday" links nothing


def _part(task: str, question: str, answer: str) -> dict:
    return {"task": task, "draft": {"question": question, "answer": answer},
            "support": {"score": 1.0},
            "answered": {"p": 0.9, "parts": [{"part": question, "p_answered": 0.9}]},
            "verified": {"answer": answer, "nearest": [], "agrees": True}}


def test_a_pair_joins_two_questions_each_checked_and_needing_both_chunks() -> None:
    from localeval.generate.assemble import from_pair
    from localeval.generate.chunking import Chunk

    light = Chunk(id="light.md#1", text="The Bell Rock Lighthouse was built in 1810 by Robert "
                  "Stevenson.", source="light.md", language="en", tokens=20)
    keepers = Chunk(id="light.md#2", text="The Bell Rock Lighthouse was automated in 1988.",
                    source="light.md", language="en", tokens=12)
    terms = ({"bell", "rock", "lighthouse"}, {"bell", "rock", "lighthouse"})
    built = _part("single:light.md#1", "When was the Bell Rock Lighthouse built?",
                  "It was built in 1810.")
    auto = _part("single:light.md#2", "When was the Bell Rock Lighthouse automated?",
                 "It was automated in 1988.")
    result = {"task": "pair:x", "parts": [built, auto], "other_chunk": [0.0, 0.0]}
    kept = from_pair(result, light, keepers, "document: 0.80", terms)
    assert kept.dropped is None and kept.row is not None
    assert kept.row.question == ("When was the Bell Rock Lighthouse built, and when was the "
                                 "Bell Rock Lighthouse automated?")
    assert kept.row.ground_truth == "It was built in 1810. It was automated in 1988."
    assert kept.row.expected_ids == ["light.md#1", "light.md#2"]
    assert kept.row.parts == ["single:light.md#1", "single:light.md#2"]
    suffices = from_pair(result | {"other_chunk": [1.0]}, light, keepers, "document", terms)
    assert suffices.dropped == "one_chunk_suffices"  # the first chunk supports both answers
    same = from_pair(result | {"parts": [built, built]}, light, keepers, "document", terms)
    assert same.dropped == "one_chunk_suffices" and "the same" in same.detail
    bad = from_pair(result | {"parts": [built, auto | {"support": {"score": 0.5}}]}, light,
                    keepers, "document", terms)
    assert bad.dropped == "unsupported" and bad.detail["part"] == 2


def test_two_chinese_questions_join_into_one() -> None:
    from localeval.generate.assemble import joined

    assert joined("石鼓书院的门票是多少？", "朱熹为石鼓书院写了什么？", "zh", question=True) == \
        "石鼓书院的门票是多少，以及朱熹为石鼓书院写了什么？"
    assert joined("门票为四十元", "朱熹撰写了记文。", "zh", question=False) == \
        "门票为四十元。朱熹撰写了记文。"
    assert joined("Who built it?", "Nadia Okafor won what?", "en", question=True) == \
        "Who built it, and Nadia Okafor won what?"  # a name keeps its capital


def test_retype_types_a_question_as_a_user_would() -> None:
    en = retype("When was the Lighthouse automated?", "light.md#3", "en")
    assert en == casual_form("When was the Lighthouse automated?", "light.md#3", "en")
    assert en.islower() and not en.endswith("?")
    assert retype("三号线的控制中心在哪里？", "m#1", "zh") == "三号线控制中心在哪儿"
    assert retype("茶园主要产什么茶？", "t#1", "zh") == "茶园主要产啥茶"
    assert retype("咖啡馆的招牌饮品是什么？", "c#1", "zh") == "咖啡馆招牌饮品是啥"
    assert retype("江州博物馆建于哪一年？", "m#2", "zh") == "江州博物馆建于哪年"
    assert retype("江州博物馆每天限额多少人？", "m#3", "zh") == "江州博物馆每天限额多少人啊"
    assert retype("江州博物馆藏品多吗？", "m#4", "zh") == "江州博物馆藏品多吗"  # no second particle


def test_a_colloquial_form_must_ask_with_its_single_question_s_words() -> None:
    from localeval.generate.filters import asks_otherwise, question_words

    # measured: the 1.5B judge turned "When was … rebuilt?" into "how long did it take …"
    assert asks_otherwise("how long did it take to rebuild the harbour at holm island",
                          "When was the harbour at Holm Island rebuilt?")
    assert asks_otherwise("how long does it take to get from marrowick to holm island",
                          "How far is it from Marrowick to Holm Island?")
    assert not asks_otherwise("how hot is tea maker's drum", "How hot is the tea maker's drum?")
    assert not asks_otherwise("is the museum free", "Is the museum free on Sundays?")
    assert question_words("茶园主要产啥茶") == question_words("茶园主要产什么茶？") == {"什么"}
    assert not asks_otherwise("石鼓书院门票多少钱", "石鼓书院的门票是多少元？")
    assert asks_otherwise("石鼓书院在哪儿", "石鼓书院的门票是多少元？")


def _when_asked(chunk_id: str, subject: str, question: str, answer: str, casual: str,
                blind: str) -> dict:
    """A single task's work-file record for a "when" question whose every judge check passed
    (supported, answered, verified blind), with the judge's casual form `casual`."""
    draft = {"subject": subject, "question": question, "answer": answer, "casual": casual,
             "missing": "", "unanswerable": f"Who designed {subject}?"}
    return {"task": f"single:{chunk_id}", "draft": draft, "support": {"score": 1.0},
            "answered": {"p": 0.9, "parts": [{"part": "when", "p_answered": 0.9}]},
            "verified": {"answer": blind, "agrees": True}, "unanswerable": {"score": 0.0}}


def test_a_colloquial_draft_that_asks_otherwise_is_its_single_question_retyped() -> None:
    from localeval.generate.assemble import from_single
    from localeval.generate.chunking import Chunk

    chunk = Chunk(id="h.md#0", source="h.md", language="en", tokens=20, text=(
        "The harbour at Holm Island was rebuilt in 2015 after storm Imogen destroyed it."))
    result = _when_asked(chunk.id, "Holm Island", "When was the harbour at Holm Island rebuilt?",
                         "It was rebuilt in 2015.",
                         "how old is the rebuilt harbour at holm island", "In 2015.")
    single, colloquial, _ = from_single(result, chunk, {"holm", "island", "harbour"})
    assert single.dropped is None
    assert colloquial.dropped is None and colloquial.row is not None
    assert colloquial.row.retyped == "asks_otherwise"
    assert colloquial.row.question.startswith("when was the")


def test_a_colloquial_form_writing_a_word_its_question_and_chunk_lack_is_retyped() -> None:
    """Read in a generated test set (2026-12-02): the 1.5B judge's casual form of "When did
    Sjaak Rijke get rescued by French special forces in Mali?" asked "… in malawi", another
    country, and was kept. A form writing an English word that neither its single question nor
    its chunk holds is replaced by the question retyped by rule; a typo the rule makes and
    a word of the chunk are no such word."""
    from localeval.generate.assemble import from_single
    from localeval.generate.chunking import Chunk
    from localeval.generate.filters import changes_words

    text = ("A Dutchman abducted by Al Qaeda in Mali has been freed. The French military said "
            "the rescue of Sjaak Rijke took place at 5am today.")
    question = "When did Sjaak Rijke get rescued by French special forces in Mali?"
    assert changes_words("when did sjaak rijke get rescued by french special forces in malawi",
                         question, text) == ["malawi"]
    assert changes_words("when was sjaak rijke rescued by the french military", question,
                         text) == []  # "military" is the chunk's
    chunk = Chunk(id="n.txt#1", source="n.txt", language="en", tokens=30, text=text)
    result = _when_asked(chunk.id, "Sjaak Rijke", question,
                         "The rescue of Sjaak Rijke took place at 5am today.",
                         "when did sjaak rijke get rescued by french special forces in malawi",
                         "At 5am today.")
    single, colloquial, _ = from_single(result, chunk, {"sjaak", "rijke"})
    assert single.dropped is None
    assert colloquial.row is not None and colloquial.row.retyped == "names_outside"
    assert "malawi" not in colloquial.row.question and "mali" in colloquial.row.question.split()


def test_an_answer_of_another_kind_than_its_question_is_caught() -> None:
    from localeval.generate.answer_kind import answer_lacks
    from localeval.generate.filters import first_failed

    assert answer_lacks("How long does it take to get from Marrowick to Holm Island by ferry?",
                        "It is a crossing of 11 kilometres.") == "a duration"
    assert answer_lacks("How long does the crossing take?", "About 40 minutes.") is None
    assert answer_lacks("How long is the Severn Gate Bridge?", "It is 1,420 metres long.") is None
    assert answer_lacks("How many players did the club start with?", "Six players.") is None
    assert answer_lacks("How many players did the club start with?", "Walter Pryce.") == \
        "a number"
    assert answer_lacks("When did the library open?", "It opened in 1889.") is None
    assert answer_lacks("When did the library open?", "Henry Ashdown paid for it.") == "a time"
    assert answer_lacks("Who designed the bridge?", "Margaret Lowe.") is None  # no rule: kept
    assert answer_lacks("雌性每年有多少次发情期？", "每年只有两到三天的发情期。") == "the unit 次"
    assert answer_lacks("蔚县有从事剪纸的企业和作坊多少家？", "四百多家。") is None
    assert answer_lacks("京沪高铁的设计时速是多少？", "设计时速为三百五十公里。") is None
    assert answer_lacks("石鼓书院的门票多少钱？", "门票为四十元。") is None
    assert answer_lacks("江州博物馆建于哪一年？", "建于一九五八年。") is None
    assert answer_lacks("江州博物馆建于哪一年？", "由市政府建造。") == "a time"
    assert answer_lacks("云岭茶园的海拔是多少？", "云岭茶园面积约三百二十亩。") == "the 海拔"
    assert answer_lacks("青琅湖的海拔是多少？", "湖面海拔两千一百米。") is None
    assert answer_lacks("书院的藏书量是多少？", "藏书达一万余卷。") is None
    assert answer_lacks("围棋在民间流行多久了？", "出现了黄龙士等著名棋手。") == "a duration"
    assert first_failed("single", "How many items may a member borrow at Wexcombe Library?",
                        "Members may borrow books.",
                        ["Wexcombe Library members may borrow 12 items."],
                        {"wexcombe"}, 240) == ("unanswered", "a number")


def test_a_question_asking_for_no_one_fact_is_vague() -> None:
    from localeval.generate.filters import vague

    assert vague("What is Vatnfell Glacier about?")
    assert vague("Describe the Severn Gate Bridge.")
    assert vague("请介绍一下石鼓书院。") and vague("云岭茶园的环境怎么样？")
    assert not vague("What is the most serious pest of honeybees?")


def test_a_pronoun_links_no_two_documents() -> None:
    docs = [Document("a.md", "Nadia Okafor is the club's best player. She won in 2019."),
            Document("b.md", "The MV Corra Lin entered service in 2009. She carries cars.")]
    chunks = [c for d in docs for c in chunk_document(d, max_tokens=64, language="en")]
    vectors = HashEmbedder().encode([c.text for c in chunks])
    assert pick_pairs(chunks, vectors, seed=0, count=4) == []


def test_a_question_is_joined_into_one_kept_pair_only() -> None:
    import asyncio

    from localeval.generate.assemble import Candidate, assemble
    from localeval.generate.store import Row
    from localeval.models.embed import EmbeddingStore

    def pair(rid: str, question: str, parts: list[str]) -> Candidate:
        row = Row(id=rid, question=question, ground_truth="x", reference_contexts=["a", "b"],
                  expected_ids=["a", "b"], kind="pair", language="en", source="s", parts=parts)
        return Candidate("pair", rid, row)

    made = asyncio.run(assemble([
        pair("p1", "When was the Bell Rock built, and who kept it?", ["s:1", "s:2"]),
        pair("p2", "When was the Bell Rock built, and how tall is it?", ["s:1", "s:3"]),
        pair("p3", "Who kept the Bell Rock, and how tall is its tower?", ["s:4", "s:3"])],
        EmbeddingStore(HashEmbedder()), n=10, duplicate_cosine=0.999))
    assert [r.id for r in made.rows] == ["p1", "p3"]
    assert made.dropped[0].dropped == "duplicate" and "s:1" in made.dropped[0].detail


def test_a_colloquial_row_goes_with_its_single_question() -> None:
    """Issue 41 item 15: a single question dropped as a near-duplicate took its colloquial
    form with it only when a filter dropped it; its colloquial row was kept, a near-duplicate
    of the other colloquial row, pointing at a row not in the test set."""
    import asyncio

    from localeval.generate.assemble import Candidate, assemble
    from localeval.generate.store import Row
    from localeval.models.embed import EmbeddingStore

    def row(kind: str, key: str, question: str) -> Candidate:
        parent = f"single:{key}" if kind == "colloquial" else None
        return Candidate(kind, key, Row(
            id=f"{kind}:{key}", question=question, ground_truth="1878",
            reference_contexts=["The Tay Bridge opened in 1878."], expected_ids=[key],
            kind=kind, language="en", source="s", parent=parent))

    made = asyncio.run(assemble([
        row("single", "s#0", "When did the Tay Bridge open?"),
        row("single", "s#1", "When did the Tay Bridge open?"),
        row("colloquial", "s#0", "when did the tay bridge open"),
        row("colloquial", "s#1", "tay bridge opening year")],
        EmbeddingStore(HashEmbedder()), n=10, duplicate_cosine=0.999))
    assert [r.id for r in made.rows] == ["single:s#0", "colloquial:s#0"]
    (_, gone) = made.dropped
    assert gone.row is not None and gone.row.id == "colloquial:s#1"
    assert gone.dropped == "duplicate" and "single:s#1" in gone.detail
    assert made.counts["colloquial"]["duplicate"] == 1


def test_an_unanswerable_question_a_sentence_of_the_corpus_answers_is_found() -> None:
    from localeval.generate.answerable import STATED_SHARE, stated_in

    said = ["新馆由建筑师周望设计，建筑面积三万二千平方米。", "博物馆每周一闭馆。",
            "The comet passed closest to the Sun in March 1997.",
            "Hallam Hill Observatory sits at 1,140 metres above sea level."]
    share, where = stated_in("新馆的建筑面积是多少平方米？", said)
    assert share >= STATED_SHARE and where == said[0]
    assert stated_in("What was the name of the comet?", said)[0] >= STATED_SHARE
    assert stated_in("江州博物馆的开放时间是什么时候？", said)[0] < STATED_SHARE
    assert stated_in("How many people visit Hallam Hill Observatory each year?",
                     said)[0] < STATED_SHARE
    metro = ["单程票价按里程计算，起步价为两元，最高票价为七元。"]  # the name is the question's
    assert stated_in("江城地铁三号线的单程票价是多少元？", metro)[0] < STATED_SHARE
    line = frozenset({"江城", "城地", "地铁", "江城地铁三号线"})  # its terms and its title
    assert stated_in("江城地铁三号线的单程票价是多少元？", metro, line)[0] >= STATED_SHARE
    assert stated_in("江城地铁三号线的单程票价是多少元？", said, line)[0] < STATED_SHARE
    assert stated_in("江城地铁三号线是什么？", said, line) == (1.0, "")  # only its subject
    hill = frozenset({"hallam", "hill", "observatory"})
    assert stated_in("How many metres above sea level does the Hallam Hill Observatory sit?",
                     said, hill)[0] >= STATED_SHARE
    assert stated_in("What is the altitude of Hallam Hill Observatory above sea level?",
                     said, hill)[0] >= STATED_SHARE  # 3 of its 4 words


def test_an_unanswerable_question_is_checked_against_its_own_documents_chunks() -> None:
    """The corpus's nearest chunks to "江州博物馆的开放时间是什么时候？" are those repeating the
    museum's name; the chunk of its own document that says when it opens is checked too."""
    import asyncio

    import numpy as np

    from localeval.config import Settings
    from localeval.generate.chunking import Chunk
    from localeval.generate.tasks import Env, nearest_chunks
    from localeval.models.embed import EmbeddingStore, store_for

    texts = [("a.html", "江州博物馆建于一九五八年。江州博物馆位于滨江大道。"),
             ("a.html", "江州博物馆现有藏品约十二万件，江州博物馆的青铜鼎最有名。"),
             ("a.html", "每周一闭馆，其他时间上午九点至下午五点开放。"),
             ("b.md", "江州博物馆的讲解员江州人最多，江州博物馆时间表每年更新。"),
             ("b.md", "江州博物馆时间长，江州博物馆什么都有。")]
    chunks = [Chunk(id=f"{src}#{i}", text=t, source=src, language="zh", tokens=20)
              for i, (src, t) in enumerate(texts)]
    embeddings = EmbeddingStore(HashEmbedder())

    async def near(source: str) -> list[str]:
        store = await store_for(embeddings, "zh")
        vectors = np.asarray(await store.vectors([c.text for c in chunks]))
        env = Env(Settings(judge="fake"), None, embeddings, {"zh": (chunks, vectors)},  # type: ignore[arg-type]
                  {})
        return [c.id for c in await nearest_chunks(env, "江州博物馆的开放时间是什么时候？", "zh",
                                                   source)]

    everywhere = asyncio.run(near("elsewhere.md"))  # the corpus's nearest only
    assert "a.html#2" not in everywhere
    assert "a.html#2" in asyncio.run(near("a.html"))


def test_sentence_openings_are_read_back_from_the_word_only() -> None:
    """subjects._opens_sentence decides as the whole-prefix pattern it replaced did (issue 41
    item 8: that pattern searched the whole prefix for every capitalised word, quadratic in a
    document's length), on random texts of the characters that matter."""
    import random
    import re

    from localeval.generate.subjects import NAME, _opens_sentence

    before = re.compile(r"(?:^|[.!?:;\n][\"'“‘(\s]*|^[\"'“‘(\s]+)$")
    rng = random.Random(7)
    alphabet = ["A", "Bo", "x", " ", " ", "\n", ".", "!", ":", ";", ",", '"', "“", "(",
                "\t", "\u3000"]
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 24)))
        for m in NAME.finditer(text):
            assert _opens_sentence(text, m.start()) == bool(before.search(text[:m.start()])), text


def test_a_document_without_sentence_ends_is_cut_into_chunks_that_fit() -> None:
    """A Low item of issue 41: a long one-line document with no sentence end was one chunk."""
    from localeval.generate.chunking import chunk_document, estimate_tokens
    from localeval.generate.documents import Document

    words = " ".join(f"item{i} value {i * 7}" for i in range(3000))
    chinese = "数据" * 2000
    for text in (words, chinese, words + ". " + chinese):
        chunks = chunk_document(Document("dump.txt", text), max_tokens=256, language="auto")
        assert len(chunks) > 10
        assert all(estimate_tokens(c.text) <= 256 for c in chunks)
        assert "".join(c.text for c in chunks).replace(" ", "") == text.replace(" ", "")


def test_a_pages_navigation_is_not_its_text() -> None:
    """Issue 41 item 15: HTML navigation became a chunk of its own ("Home|Visit")."""
    from localeval.generate.documents import html_text

    page = ("<html><body><nav><a href='/'>Home</a>|<a href='/v'>Visit</a></nav>"
            "<h1>The Harbour</h1><p>The harbour opened in 1890.</p></body></html>")
    assert html_text(page) == "# The Harbour\n\nThe harbour opened in 1890."


def test_the_filter_table_counts_every_column_and_names_its_tests() -> None:
    """Every report column is a row of the filter table, every row's name a column, and the
    test each row names exists."""
    from pathlib import Path

    from localeval.generate.filters import CHEAP, FILTERS, TABLE

    assert {f.name for f in TABLE} == set(FILTERS)
    assert all(f.needs != "judge" for f in CHEAP)
    tests = "".join(p.read_text("utf-8") for p in Path(__file__).parent.glob("test_generate*.py"))
    assert [f.test for f in TABLE if f"def {f.test}(" not in tests] == []
