"""The generator's rules found by reading generated rows: what names a document's subject, what
kind of answer a question asks for, when a corpus answers an "unanswerable" question."""

from __future__ import annotations

from localeval.generate.subjects import names_subject, subject_terms
from localeval.generate.words import content_words

FERRY = """# The Orrin Sound Ferry

The Orrin Sound ferry links Calvay with the island of Sgeir. The ferry sails four times a day.

Since 2011 the island's harbour has had a new pier. Fares rose on 1 March 2020."""
CAFE = ("海湾书店开在厦门市中山路上，创办于二零一零年。书店的二楼是咖啡区，可以坐二十个人。"
        "书店每天上午十点开门。二零二零年，海湾书店被评为厦门最美书店。")
GARDEN = """# 青峰茶园

青峰茶园位于浙江省安吉县，创建于一九九零年。茶园海拔约五百米。

茶园主要出产白茶，每年三月开始采摘。"""


def test_a_short_form_of_the_documents_name_names_no_subject() -> None:
    terms = subject_terms({"ferry.md": FERRY, "shop.txt": CAFE, "garden.md": GARDEN})
    en, shop, garden = terms["ferry.md"], terms["shop.txt"], terms["garden.md"]
    assert names_subject("When did the Orrin Sound ferry first sail?", en)
    assert names_subject("Where does the ferry to Sgeir leave from?", en)  # a name
    assert not names_subject("How often does the ferry sail?", en)  # which ferry?
    assert not names_subject("When was the island's new pier built?", en)  # "Island" is no name
    assert not names_subject("What happened to fares in March?", en)  # a month names nothing
    assert not names_subject("Since when has the harbour had a pier?", en)  # opens a sentence
    assert names_subject("海湾书店的二楼是什么？", shop)  # its name, found without a title
    assert not names_subject("书店每天几点开门？", shop)  # which bookshop?
    assert names_subject("青峰茶园主要出产什么茶？", garden)
    assert not names_subject("茶园主要出产什么茶？", garden)  # which tea garden?
    assert not names_subject("茶园的海拔是多少？", garden)


def test_a_chinese_opening_that_is_no_name_leaves_the_documents_own_terms() -> None:
    """Issue 41 item 15: a news item opening "越来越多的……" writes that opening again ("越来越
    多的人选择……"); taken as the document's name, it left 越来 its one subject term, and every
    Chinese question was dropped as naming no subject."""
    news = ("越来越多的中国农民接受“有问题找律师”。随着依法治国的深入推进，越来越多的人选择"
            "“有问题找律师”解决。常春律师事务所的律师为农民提供法律援助。农民段国栋说，律师帮他"
            "打赢了官司。")
    terms = subject_terms({"news.txt": news})["news.txt"]
    assert terms != {"越来"}
    assert names_subject("常春律师事务所的律师在哪里提供法律援助？", terms)
    assert not names_subject("谁赢了？", terms)


def test_an_english_title_of_common_nouns_names_its_subject() -> None:
    doc = "# Baking Sourdough at Home\n\nA sourdough starter is fed once a day in Celsius."
    terms = subject_terms({"bread.md": doc})["bread.md"]
    assert names_subject("How often is a sourdough starter fed?", terms)
    assert "celsius" in terms and "baking" in terms


def test_the_number_or_time_asked_for_must_be_what_the_answer_adds() -> None:
    from localeval.generate.answer_kind import answer_lacks

    assert answer_lacks("When are club nights held on Tuesday and Thursday at 7 pm?",
                        "Club nights are held every Tuesday and Thursday from 7 pm.") == "a time"
    assert answer_lacks("When are club nights held?", "Every Tuesday from 7 pm.") is None
    assert answer_lacks("How many players joined the club in 1962?",
                        "The club started in 1962 with players.") == "a number"
    assert answer_lacks("How many players joined the club in 1962?", "Six players.") is None
    assert answer_lacks("三号线开通五年来，日均客流是多少？", "开通五年来日均客流增长很快。") == \
        "a number"
    assert answer_lacks("三号线开通五年来，日均客流是多少？", "日均客流四十二万人次。") is None
    assert answer_lacks("石鼓书院什么时候被列为四大书院之一？", "石鼓书院被列为四大书院之一。") \
        == "a time"
    assert answer_lacks("石鼓书院什么时候被列为四大书院之一？", "北宋时期。") is None
    assert answer_lacks(  # the year is the question's; "212 players" tells no time
        "When did the Alder Street Chess Club run the Pryce Memorial tournament in 2023?",
        "The club ran the Pryce Memorial tournament in 2023 with 212 players.") == "a time"
    assert answer_lacks("When is a starter ready?", "Six to eight hours after a feeding.") is None
    assert answer_lacks("How often do sensors measure wind speed every second?",
                        "Sensors measure wind speed every second.") == "a frequency"
    assert answer_lacks("How often is the mirror recoated?", "Every three years.") is None
    assert answer_lacks("How many people join the Alder Street Chess Club each year?",
                        "Membership costs 60 pounds a year for adults.") == "a count of people"
    assert answer_lacks("How many runners take part in the Riverside Marathon?",
                        "Runners must finish within seven hours.") == "a count of runners"
    assert answer_lacks("How many items does the library lend each year?",
                        "It lends about 95,000 items a year.") is None
    assert answer_lacks("How many times did Nadia Okafor win the championship?",  # a count
                        "She won it four years in a row.") is None


def test_a_chinese_answer_telling_three_facts_for_one_is_long() -> None:
    from localeval.generate.filters import long_answer

    chunk = ["青琅湖是一个高原淡水湖，湖面海拔两千一百米，面积约六十八平方公里，最深处达九十三米。"
             "湖水主要来自周围山地的十八条溪流。"]
    assert long_answer("青琅湖是一个高原淡水湖，湖面海拔两千一百米，面积约六十八平方公里。",
                       chunk, "single", 240)
    assert not long_answer("青琅湖湖面海拔两千一百米。", chunk, "single", 240)
    assert not long_answer("咖啡馆的招牌饮品是海盐拿铁，售价三十二元。", chunk, "single", 240)
    assert not long_answer("Lowe designed it, with Arup, in 1995, for the city.", chunk,
                           "single", 240)  # English commas: no rule


def test_a_documents_naming_holds_its_terms_name_and_title() -> None:
    """subjects.namings: each document's subject terms, name and title in one structure;
    `named_by` is all of them, the Chinese name whole (no word of its own)."""
    from localeval.generate.subjects import Naming, document_names, namings

    docs = {"ferry.md": FERRY, "shop.txt": CAFE, "note.txt": "the ferry leaves at noon."}
    got = namings(docs)
    terms = subject_terms(docs)
    assert {src: set(n.terms) for src, n in got.items()} == terms
    assert {src: n.name for src, n in got.items() if n.name} == document_names(docs)
    ferry, shop = got["ferry.md"], got["shop.txt"]
    assert ferry.title == "The Orrin Sound Ferry" and ferry.title_words >= {"orrin", "ferry"}
    assert {"The Orrin Sound Ferry", "Orrin Sound Ferry"} <= ferry.named_by
    assert ferry.own_terms == {"orrin", "sound"}  # not "calvay", "sgeir": names of its body
    assert shop.title == shop.name == "海湾书店" and "海湾书店" in shop.named_by
    assert Naming().named_by == frozenset()


def test_a_short_form_of_the_documents_name_is_written_in_full() -> None:
    from localeval.generate.subjects import document_names, named

    names = document_names({"ferry.md": FERRY, "shop.txt": CAFE, "garden.md": GARDEN,
                            "bees.md": "# Keeping Honeybees\n\nA honeybee colony has a queen.",
                            "go.md": "# 围棋的规则与历史\n\n围棋起源于中国。"})
    assert names == {"ferry.md": "Orrin Sound Ferry", "shop.txt": "海湾书店",
                     "garden.md": "青峰茶园"}  # no name: a title of common nouns, or with 的
    assert named("How often does the ferry sail?", names["ferry.md"]) == \
        "How often does the Orrin Sound Ferry sail?"
    assert named("Who runs the sound ferry?", names["ferry.md"]) == \
        "Who runs the Orrin Sound Ferry?"
    assert named("What does a ferry ticket cost?", names["ferry.md"]) == \
        "What does a ferry ticket cost?"  # not "the ferry": left as it is
    assert named("书店每天几点开门？", names["shop.txt"]) == "海湾书店每天几点开门？"
    assert named("茶园的海拔是多少？", names["garden.md"]) == "青峰茶园的海拔是多少？"
    assert named("安吉有几家茶园？", names["garden.md"]) == "安吉有几家茶园？"  # inside a phrase
    terms = subject_terms({"garden.md": GARDEN})["garden.md"]
    assert names_subject(named("茶园主要出产什么茶？", names["garden.md"]), terms)
    assert names_subject("When do honeybees swarm?", {"honeybee"})  # a stem names it


def test_a_name_of_its_own_document_is_not_named_outside_its_chunk() -> None:
    from localeval.generate.filters import first_failed

    chunk = ["The ferry sails four times a day in summer."]
    terms = subject_terms({"ferry.md": FERRY})["ferry.md"]
    assert first_failed("single", "How often does the Orrin Sound Ferry sail in summer?",
                        "Four times a day.", chunk, terms, 240) is None
    assert first_failed("single", "How often does the Orrin Sound Ferry sail to Paris?",
                        "Four times a day.", chunk, terms, 240) == ("names_outside", ["Paris"])
    assert first_failed("single", "Who was the Orrin Sound Ferry's first captain?",
                        "Four times a day.", chunk, terms, 240) is None  # a possessive

    later = ["Construction took four years and cost 330 million pounds."]  # no "bridge" in it
    bridge = "# The Severn Gate Bridge\n\nThe Severn Gate Bridge opened in 1998. The bridge..."
    mine = subject_terms({"bridge.md": bridge})["bridge.md"]
    asked = "How long did it take to build the Severn Gate Bridge?"
    assert first_failed("single", asked, "It took four years.", later, mine, 240) == (
        "names_outside", ["Bridge"])  # without its title: the word stands nowhere it sees
    assert first_failed("single", asked, "It took four years.", later, mine, 240,
                        frozenset(content_words("The Severn Gate Bridge"))) is None  # its title


def test_an_answer_telling_another_fact_of_its_chunk_is_unanswered() -> None:
    from localeval.generate.filters import first_failed, off_point

    chunk = ["The bridge has a main span of 456 metres between two towers. The deck is made of "
             "steel girders and carries six traffic lanes."]
    terms = {"severn", "gate"}
    assert off_point("What is the Severn Gate Bridge made of?",
                     "The bridge has a main span of 456 metres.", chunk, terms) == \
        "The deck is made of steel girders and carries six traffic lanes."
    assert first_failed("single", "What is the Severn Gate Bridge made of?",
                        "The bridge has a main span of 456 metres.", chunk, terms, 240)[0] == \
        "unanswered"
    assert off_point("What is the Severn Gate Bridge made of?", "Steel girders.", chunk,
                     terms) == ""
    tolls = ["Tolls were charged until they were abolished in December 2018. About 71,000 "
             "vehicles now cross the bridge on an average day."]
    assert off_point("How many people cross the Severn Gate Bridge daily on average?",
                     "Tolls were abolished in December 2018.", tolls, terms) == \
        "About 71,000 vehicles now cross the bridge on an average day."  # two of its words
    built = ["Construction took four years and cost 330 million pounds. About 2,000 workers "
             "died during the building of the towers."]
    assert off_point("How long did it take to build the Severn Gate Bridge?",
                     "Construction took four years.", built, terms) == ""  # a paraphrase: one
    # word of its point ("building") in a sentence is not enough to be about it
    assert off_point("How tall is the Severn Gate Bridge?", "It rises 137 metres.",
                     ["Its towers rise 137 metres."], terms) == ""  # no sentence about "tall"


def test_a_which_or_who_question_needs_a_name_in_its_answer() -> None:
    from localeval.generate.answer_kind import answer_lacks

    assert answer_lacks("半岛咖啡馆被哪家旅行杂志评为青岛最值得去的十家咖啡馆之一？",
                        "半岛咖啡馆被一家旅行杂志评为青岛最值得去的十家咖啡馆之一。") == "a name"
    assert answer_lacks("哪家杂志评选了半岛咖啡馆？", "《城市画报》评选了半岛咖啡馆。") is None
    assert answer_lacks("石鼓书院的创始人是谁？", "石鼓书院的创始人是李宽。") is None
    assert answer_lacks("Which magazine named the Peninsula Cafe one of the best?",
                        "A magazine named the Peninsula Cafe one of the best.") == "a name"
    assert answer_lacks("Who designed the library?", "The architect Thomas Kell.") is None


def test_a_rewrite_naming_the_subject_must_ask_the_same() -> None:
    """tasks.renamed takes the judge's rewrite only when it asks what the question asked: the
    same question words, nothing beside the name but one word, none of the answer's."""
    from localeval.generate.filters import same_question

    hill = "the Hallam Hill Observatory"
    assert same_question("When was the mirror cast?",
                         "When was the mirror cast at the Hallam Hill Observatory?", hill, None)
    assert same_question("湖中特有的鱼类是什么？", "青琅湖中特有的鱼类是什么？", "青琅湖",
                         "青琅裂腹鱼")
    assert same_question("常设展览共有几个？", "江州博物馆常设展览共有几个？", "江州博物馆", None)
    assert same_question("What is the name of the tournament?",  # one word beside the name
                         "What is the name of the tournament run by the Alder Street Chess "
                         "Club?", "the Alder Street Chess Club", "The Pryce Memorial")
    assert not same_question("What is the name of the tournament?",  # it tells the answer
                             "What is the name of the Pryce Memorial tournament of the Alder "
                             "Street Chess Club?", "the Alder Street Chess Club",
                             "The Pryce Memorial")
    assert not same_question("常设展览共有几个？", "江州博物馆的常设展览共有多少件文物？",
                             "江州博物馆", None)  # another question word, another thing
    assert not same_question("When was the mirror cast?", "Who cast the mirror of the Hallam "
                             "Hill Observatory?", hill, None)


def test_a_rewrite_of_a_question_naming_another_name_only_places_it() -> None:
    """filters.only_places: the name put in after of/at/in, or for its short form, and
    nothing else changed; "rebuilt by the ferry" says who rebuilt it."""
    from localeval.generate.filters import only_places

    assert only_places("When did the comet pass closest to the Sun?", "When did the comet pass "
                       "closest to the Sun at Hallam Hill Observatory?", "Hallam Hill Observatory")
    assert only_places("When do researchers visit the glacier every September?",
                       "When do researchers visit the Vatnfell Glacier every September?",
                       "Vatnfell Glacier")
    assert only_places("三号线用什么车？", "江城地铁三号线用什么车？", "江城地铁三号线")
    assert not only_places("When was Holm Island rebuilt?",
                           "When was Holm Island rebuilt by Kestrel Bay Ferry?",
                           "Kestrel Bay Ferry")
    assert not only_places("When did the comet pass closest to the Sun?", "When did the comet "
                           "discovered at Hallam Hill Observatory pass closest to the Sun?",
                           "Hallam Hill Observatory")


def test_a_question_is_rewritten_to_hold_a_name_not_a_description() -> None:
    from localeval.generate.subjects import subject_name

    terms = subject_terms({"ferry.md": FERRY, "garden.md": GARDEN})
    assert subject_name("The Orrin Sound Ferry", terms["ferry.md"]) == "the Orrin Sound Ferry"
    assert subject_name("anything", terms["ferry.md"], "Orrin Sound Ferry") == \
        "Orrin Sound Ferry"  # the document's own name first
    assert subject_name("the ferry", terms["ferry.md"]) == ""  # names no subject term
    assert subject_name("The Orrin Sound ferry, which sails four times a day",
                        terms["ferry.md"]) == ""  # a clause
    assert subject_name("青峰茶园", terms["garden.md"]) == "青峰茶园"
    assert subject_name("青峰茶园的白茶", terms["garden.md"]) == ""  # a description


def test_an_english_question_naming_a_place_with_a_diacritic_is_english() -> None:
    """Language rules go by Chinese characters, not by ASCII: "Blålon" left the question below
    to the Chinese rules, which found no question word in it (not_a_question)."""
    from localeval.generate.filters import asks, question_words

    question = "How long does it take to get to the glacier from Blålon car park?"
    assert asks(question) and question_words(question) == {"how long"}
    assert asks("复兴号列车有多快啊")


def test_two_chinese_question_words_ask_two_things() -> None:
    from localeval.generate.filters import two_things

    assert two_things("江城地铁三号线的首班车时间是什么时候，末班车是几点？")
    assert not two_things("江城地铁三号线的末班车是几点？")


def test_a_part_the_question_never_asks_does_not_drop_its_answer() -> None:
    from localeval.generate.filters import asked_parts

    question = "How long did it take to build the Severn Gate Bridge?"
    parts = [{"part": question, "p_answered": 0.87},
             {"part": "What was the outcome of the construction?", "p_answered": 0.28}]
    assert asked_parts(parts, question) == parts[:1]
    both = "How many crossings does the Kestrel Bay Ferry make in summer and winter?"
    seasons = [{"part": "How many crossings does the Kestrel Bay Ferry make in summer?",
                "p_answered": 0.9}, {"part": "How many crossings in winter?", "p_answered": 0.2}]
    assert asked_parts(seasons, both) == seasons  # each is asked: both must be answered
    invented = [{"part": "What is the ferry's schedule?", "p_answered": 0.1}]
    assert asked_parts(invented, both) == invented  # none asked: every part counts


def test_an_answers_last_clauses_that_tell_what_was_not_asked_are_cut() -> None:
    """drafting.without_unasked: a last clause holding none of the question's content words
    goes while the rest still holds the kind of answer asked; a clause naming what is asked,
    or one the answer needs, stays; a question of no known kind keeps its answer whole."""
    from localeval.generate.drafting import without_unasked

    club = ("The Alder Street Chess Club was founded in 1962 by Walter Pryce, who started with "
            "six players in the back room of the Crown Inn.")
    assert without_unasked("When was the Alder Street Chess Club founded?", club) == \
        "The Alder Street Chess Club was founded in 1962 by Walter Pryce."
    race = ("The Riverside Marathon was first run in 1984, when 1,200 runners followed a course "
            "along both banks of the river Wend.")
    assert without_unasked("When did the Riverside Marathon start?", race) == \
        "The Riverside Marathon was first run in 1984."
    assert without_unasked("How many runners took part in the first Riverside Marathon?",
                           race) == race  # the clause holds what is asked
    assert without_unasked("How many members does the club have?",
                           "It has 140 members, which meet on Tuesdays.") == \
        "It has 140 members."
    assert without_unasked("When was the club founded?",
                           "The club has 140 members, which first met in 1962.") == \
        "The club has 140 members, which first met in 1962."  # the rest alone gives no time
    starter = ("Most bakers feed their starter once a day with equal weights of flour and "
               "water, and keep it at about 24 degrees Celsius.")
    assert without_unasked("What is the temperature of the sourdough starter?", starter) == \
        starter  # no kind a rule knows: nothing to check the rest by
    assert without_unasked("江州博物馆建于哪一年？",
                           "江州博物馆建于一九五八年，二零一六年迁入位于滨江大道的新馆。") == \
        "江州博物馆建于一九五八年。"
    assert without_unasked("蔚县有多少家剪纸企业？",
                           "蔚县有从事剪纸的企业和作坊四百多家，从业人员约四万人。") == \
        "蔚县有从事剪纸的企业和作坊四百多家。"
    assert without_unasked("江城地铁三号线高峰时段的行车间隔是多少？",
                           "高峰时段的行车间隔为两分三十秒，平峰时段为五分钟。") == \
        "高峰时段的行车间隔为两分三十秒，平峰时段为五分钟。"  # 时段 is asked


def test_a_chinese_question_asked_with_he_shi_is_a_question() -> None:
    """Read in a generated test set (2026-12-02): "截止日是何时？" and "5月19日，金色尖顶何时安装
    就位？" were dropped as not_a_question: 何时 (何地, 何人 …) was no question word."""
    from localeval.generate.filters import asks, question_words

    assert asks("截止日是何时？") and asks("5月19日，金色尖顶何时安装就位？")
    assert question_words("尖顶何时安装就位？") == question_words("尖顶什么时候安装就位？")
    assert question_words("凶手是何人？") == question_words("凶手是谁？")


def test_a_chinese_headline_names_its_story_by_the_words_no_other_document_writes() -> None:
    """Read in a generated test set (2026-12-02): of a news item titled by its headline, every
    word the body wrote again counted as a short form, so "国际奥委会什么时候确认有5个城市正式
    提出申请？" was dropped as unnamed_subject. A headline is no name: its words that no other
    document writes name its story; a word both stories write (上海), or a question word of
    the headline (哪儿), does not."""
    bids = ("# 邀请制去哪儿了？——国际奥委会委员杨扬释疑奥运会申办程序改革\n\n"
            "国际奥委会16日确认，有5个城市正式提出申请。国际奥委会委员杨扬解释说，邀请制并非"
            "定向邀请。上海也曾考虑申办。")
    store = ("# 全球最大迪士尼旗舰店上海开业\n\n上海迪士尼零售旗舰店20日开业。这是内地第一家"
             "迪士尼零售旗舰店。上海市民认为价格太高。")
    terms = subject_terms({"bids.md": bids, "store.md": store})
    assert names_subject("国际奥委会什么时候确认有5个城市正式提出申请？", terms["bids.md"])
    assert names_subject("迪士尼零售旗舰店什么时候开业？", terms["store.md"])
    assert not names_subject("上海市民觉得怎么样？", terms["store.md"])  # both write 上海
    assert not names_subject("它在哪儿？", terms["bids.md"])
    assert names_subject("青峰茶园主要出产什么茶？", subject_terms({"g.md": GARDEN})["g.md"])
    assert not names_subject("茶园主要出产什么茶？", subject_terms({"g.md": GARDEN})["g.md"])


def test_a_chinese_question_pointing_at_the_passage_names_no_subject() -> None:
    """Read in a generated test set (2026-12-02): "该旗舰店提供多少种商品？" (which store?) was
    kept once the headline's words named the story; a phrase opened by 该/这/此 points at the
    passage and names nothing (the question is then rewritten to name its subject)."""
    store = ("# 全球最大迪士尼旗舰店上海开业\n\n上海迪士尼零售旗舰店20日开业。该旗舰店将提供"
             "2000多种商品。")
    terms = subject_terms({"store.md": store, "g.md": GARDEN})["store.md"]
    assert not names_subject("该旗舰店提供多少种商品？", terms)
    assert not names_subject("这家旗舰店什么时候开业？", terms)
    assert names_subject("上海迪士尼旗舰店提供多少种商品？", terms)
    assert names_subject("因此迪士尼旗舰店提供多少种商品？", terms)  # 因此 is no pointer


def test_a_bare_chinese_numeral_is_no_time() -> None:
    """Read in a generated test set (2026-12-02): "……金色尖顶何时安装就位？" answered "5月19日，
    一个……金色尖顶……安装就位" (the date already in the question) was kept: 一 of 一个 counted
    as the time the answer adds."""
    from localeval.generate.answer_kind import answer_lacks

    question = "上海迪士尼旗舰店5月19日金色尖顶何时安装就位？"
    assert answer_lacks(question, "5月19日，一个璀璨夺目的金色尖顶在其八座塔中最高一座的顶端"
                                  "安装就位。") == "a time"
    assert answer_lacks("金色尖顶何时安装就位？", "金色尖顶于5月19日安装就位。") is None
    assert answer_lacks("新馆哪一年开放？", "新馆于2008开放。") is None
    assert answer_lacks("首班车几点发车？", "首班车早上六点发车。") is None
