"""Build ``conversation_eval.json``: multi-session conversations, their extracted items and questions.

Deterministic (seeded): ``python tests/data/build_conversation_eval.py`` rewrites the same file. The
conversations are composed from hand-written facts below (each with several phrasings in English and
Chinese), the people, places and dates of each conversation, small talk between the facts, and changes
of mind spread over two sessions. Every question names its evidence turns; the extracted items
(observations) name the turns they came from. The split is by conversation (``split``: dev or test),
fixed here before any tuning: the ranking's constants are chosen on dev only (docs/retrieval.md).

Question kinds: ``single`` (one fact), ``multi`` (several facts), ``time`` (when, a month, a year,
last month / 上个月, before or after an event), ``paraphrase`` (no keyword token shared with the
evidence turns or their observations: ``set_tokens`` below, which drops English stop words).
"""

from __future__ import annotations

import datetime as dt
import json
import random
import re
from pathlib import Path

SEED = 20261204
SESSIONS = 9
OUT = Path(__file__).parent / "conversation_eval.json"

# --- facts --------------------------------------------------------------------------------------
# Each fact: cat (multi-fact groups), type (item type), event (dated happening: month questions),
# say: [(en, zh)] first-person phrasings; obs: (en, zh) third person; single / para / when: [(en, zh)]
# questions. Slots: {N} the subject's name, {P} he/she, {Pp} his/her, {Pz} 他/她, and the fact's own
# slots, each an (en, zh) pair. Paraphrases never use the name or a word of the fact.

FACTS = {
    "trip_city": dict(
        cat="travel", type="EPISODE", event=True,
        slots={"city": [("Lisbon", "里斯本"), ("Kyoto", "京都"), ("Istanbul", "伊斯坦布尔"), ("Vienna", "维也纳"),
                        ("Hanoi", "河内"), ("Barcelona", "巴塞罗那"), ("Prague", "布拉格")]},
        say=[("Just got back from {city}! A whole week of wandering around and eating far too much.",
              "刚从{city}回来！整整一周到处闲逛，吃得太多了。"),
             ("I spent last week in {city}, honestly the best trip I've had in years.",
              "我上周在{city}待了一个礼拜，真是这几年最棒的一次旅行。")],
        obs=("{N} spent a week travelling in {city}.", "{N}在{city}旅行了一周。"),
        single=[("Which city did {N} visit for a week?", "{N}去哪个城市玩了一周？")],
        para=[("Where was that holiday abroad?", "那次出国度假去了哪儿？")],
        when=[("When did {N} go to {city}?", "{N}什么时候去的{city}？")],
    ),
    "hike": dict(
        cat="travel", type="EPISODE", event=True,
        slots={"mountain": [("Mount Tai", "泰山"), ("the Yellow Mountains", "黄山"), ("Snowdon", "斯诺登峰"),
                            ("Mount Fuji", "富士山"), ("Ben Nevis", "本尼维斯山")]},
        say=[("We climbed {mountain} on Saturday, my legs are still killing me.",
              "我们周六爬了{mountain}，腿到现在还疼。"),
             ("Finally did the {mountain} hike, we reached the top right at sunrise.",
              "终于去爬了{mountain}，正好赶上在山顶看日出。")],
        obs=("{N} climbed {mountain}.", "{N}爬了{mountain}。"),
        single=[("Which mountain did {N} climb?", "{N}爬了哪座山？")],
        para=[("What summit did someone reach at dawn after an exhausting ascent?", "谁在清晨登顶过一座高峰？")],
        when=[("When did {N} climb {mountain}?", "{N}是什么时候爬{mountain}的？")],
    ),
    "job_new": dict(
        cat="work", type="FACT", event=True,
        slots={"company": [("a small robotics startup", "一家小型机器人创业公司"), ("the city library", "市图书馆"),
                           ("a design agency", "一家设计公司"), ("a children's hospital", "一家儿童医院"),
                           ("an online bookshop", "一家网上书店")],
               "role": [("project manager", "项目经理"), ("data analyst", "数据分析师"),
                        ("UX designer", "交互设计师"), ("accountant", "会计")]},
        say=[("Big news: I got the job! I'm starting as a {role} at {company} next Monday.",
              "好消息：我拿到offer了！下周一开始在{company}做{role}。"),
             ("I accepted the offer from {company}, so I'll be their new {role}.",
              "我接受了{company}的offer，要去当他们的{role}了。")],
        obs=("{N} works as a {role} at {company}.", "{N}在{company}担任{role}。"),
        single=[("Where does {N} work now?", "{N}现在在哪里工作？"),
                ("What is {N}'s job?", "{N}是做什么工作的？")],
        para=[("Who hired them recently, and for which position?", "最近被哪家单位录用了，职位是啥？")],
        when=[("When did {N} get the new job?", "{N}什么时候找到新工作的？")],
    ),
    "promotion": dict(
        cat="work", type="EPISODE", event=True,
        slots={"team": [("the sales team", "销售团队"), ("the night shift", "夜班"), ("the support team", "客服团队"),
                        ("the research group", "研究小组")]},
        say=[("My boss told me today that I'll be leading {team} from next month.",
              "老板今天跟我说，下个月开始由我带{team}。"),
             ("Guess who's in charge of {team} now? Me!", "猜猜现在谁负责{team}？是我！")],
        obs=("{N} was put in charge of {team}.", "{N}开始负责{team}。"),
        single=[("What is {N} leading at work?", "{N}在工作上负责什么？")],
        para=[("Did anyone get more responsibility in the office lately?", "最近有谁升职当上领导了？")],
        when=[("When was {N} put in charge of {team}?", "{N}什么时候开始负责{team}的？")],
    ),
    "pet": dict(
        cat="home", type="FACT", event=True,
        slots={"animal": [("puppy", "小狗"), ("kitten", "小猫"), ("rabbit", "兔子"), ("parrot", "鹦鹉")],
               "petname": [("Biscuit", "饼干"), ("Mochi", "麻薯"), ("Pepper", "胡椒"), ("Luna", "露娜")]},
        say=[("We adopted a {animal} from the shelter, we named it {petname}.",
              "我们从救助站领养了一只{animal}，取名叫{petname}。"),
             ("Meet {petname}, our new {animal}! Nobody in the flat is getting any sleep.",
              "给你介绍一下{petname}，我们家新来的{animal}！全家都睡不好觉了。")],
        obs=("{N} has a {animal} named {petname}.", "{N}养了一只叫{petname}的{animal}。"),
        single=[("What is the name of {N}'s {animal}?", "{N}的{animal}叫什么名字？"),
                ("What pet does {N} have?", "{N}养了什么宠物？")],
        para=[("Is there any animal companion at home?", "家里有没有养小动物？")],
        when=[("When did {N} adopt {petname}?", "{N}什么时候领养的{petname}？")],
    ),
    "move": dict(
        cat="home", type="FACT", event=True, move=True,
        slots={"newcity": [("Berlin", "柏林"), ("Chengdu", "成都"), ("Melbourne", "墨尔本"), ("Toronto", "多伦多"),
                           ("Hangzhou", "杭州"), ("Edinburgh", "爱丁堡")]},
        say=[("The boxes are finally unpacked, we officially live in {newcity} now.",
              "箱子终于都拆完了，我们正式搬到{newcity}了。"),
             ("We moved to {newcity} last week, still getting lost on the way to the supermarket.",
              "我们上周搬到了{newcity}，去超市还老是迷路。")],
        obs=("{N} moved to {newcity}.", "{N}搬到了{newcity}。"),
        single=[("Which city does {N} live in now?", "{N}现在住在哪个城市？")],
        para=[("Where is home these days after the relocation?", "换了住处以后，如今定居何方？")],
        when=[("When did {N} move to {newcity}?", "{N}什么时候搬去{newcity}的？")],
    ),
    "sibling_wedding": dict(
        cat="family", type="EPISODE", event=True,
        slots={"sibling": [("sister", "姐姐"), ("brother", "哥哥"), ("cousin", "表妹")],
               "venue": [("a vineyard", "一个葡萄园"), ("the beach", "海边"), ("an old temple", "一座古寺"),
                         ("a tiny village church", "一个小村子的教堂")]},
        say=[("My {sibling} got married at {venue} on Sunday, I cried through the whole speech.",
              "我{sibling}周日在{venue}结婚了，致辞的时候我从头哭到尾。"),
             ("The wedding was lovely, my {sibling} chose {venue} and the weather held up.",
              "婚礼很美，我{sibling}选在{venue}办的，天气也很给力。")],
        obs=("{N}'s {sibling} got married at {venue}.", "{N}的{sibling}在{venue}举办了婚礼。"),
        single=[("Where did {N}'s {sibling} get married?", "{N}的{sibling}在哪里结的婚？")],
        para=[("Which relative tied the knot, and where was the ceremony?", "哪位亲戚办了喜事？仪式在什么地方？")],
        when=[("When was the wedding of {N}'s {sibling}?", "{N}{sibling}的婚礼是什么时候？")],
    ),
    "baby": dict(
        cat="family", type="EPISODE", event=True,
        slots={"babyname": [("Leo", "乐乐"), ("Ava", "安安"), ("Noah", "豆豆"), ("Mia", "朵朵")]},
        say=[("I'm an aunt now! My brother's baby {babyname} arrived at 3 am.",
              "我当姑姑啦！我哥的宝宝{babyname}凌晨三点出生了。"),
             ("Little {babyname} was born yesterday, I've already bought way too many tiny socks.",
              "小{babyname}昨天出生了，我已经买了一大堆小袜子。")],
        obs=("{N}'s nephew or niece {babyname} was born.", "{N}家的新生儿{babyname}出生了。"),
        single=[("What is the name of the new baby in {N}'s family?", "{N}家新出生的宝宝叫什么？")],
        para=[("Did the family welcome a newborn?", "亲戚家添丁了吗？")],
        when=[("When was {babyname} born?", "{babyname}是什么时候出生的？")],
    ),
    "injury": dict(
        cat="health", type="EPISODE", event=True,
        slots={"part": [("ankle", "脚踝"), ("wrist", "手腕"), ("knee", "膝盖")],
               "how": [("playing basketball", "打篮球"), ("on an icy pavement", "在结冰的路上"),
                       ("at a climbing gym", "在攀岩馆")]},
        say=[("I sprained my {part} {how}, so I'm on crutches for a while.",
              "我{how}的时候扭伤了{part}，得拄一阵子拐杖。"),
             ("Hurt my {part} {how}. The doctor says six weeks of rest.",
              "我{how}把{part}弄伤了，医生说要休息六周。")],
        obs=("{N} injured {Pp} {part} {how}.", "{N}{how}时伤了{part}。"),
        single=[("How did {N} hurt {Pp} {part}?", "{N}的{part}是怎么受伤的？")],
        para=[("Was anybody limping or bandaged after an accident?", "谁出了意外需要养伤？")],
        when=[("When did {N} hurt {Pp} {part}?", "{N}什么时候伤到{part}的？")],
    ),
    "allergy": dict(
        cat="health", type="FACT", event=False,
        slots={"food": [("peanuts", "花生"), ("shellfish", "贝类"), ("kiwi fruit", "猕猴桃"), ("milk", "牛奶")]},
        say=[("Careful with the menu, I'm allergic to {food}.", "点菜的时候注意一下，我对{food}过敏。"),
             ("I can't eat anything with {food} in it, I'm allergic.", "含{food}的东西我都不能吃，会过敏。")],
        obs=("{N} is allergic to {food}.", "{N}对{food}过敏。"),
        single=[("What is {N} allergic to?", "{N}对什么过敏？")],
        para=[("Which ingredient must be avoided when cooking for them?", "做饭时必须避开哪种食材？")],
        when=[],
    ),
    "hobby_instrument": dict(
        cat="hobby", type="PREFERENCE", event=True,
        slots={"instrument": [("the cello", "大提琴"), ("the ukulele", "尤克里里"), ("the piano", "钢琴"),
                              ("the drums", "架子鼓")]},
        say=[("I started lessons on {instrument}, my neighbours must hate me.",
              "我开始学{instrument}了，邻居估计恨死我了。"),
             ("Signed up for {instrument} classes on Thursday evenings, wish me luck.",
              "报了周四晚上的{instrument}课，祝我好运吧。")],
        obs=("{N} is learning to play {instrument}.", "{N}在学{instrument}。"),
        single=[("Which instrument is {N} learning?", "{N}在学什么乐器？")],
        para=[("Is someone taking music lessons?", "谁最近在练琴或者学奏乐？")],
        when=[("When did {N} start learning {instrument}?", "{N}什么时候开始学{instrument}的？")],
    ),
    "hobby_sport": dict(
        cat="hobby", type="PREFERENCE", event=False,
        slots={"sport": [("swimming", "游泳"), ("badminton", "羽毛球"), ("bouldering", "抱石"), ("tennis", "网球")]},
        say=[("I've been doing {sport} three mornings a week, it really clears my head.",
              "我现在每周三个早上去{sport}，脑子清醒多了。"),
             ("{sport} is my new obsession, I go before work whenever I can.",
              "{sport}是我最近的新爱好，一有空就上班前去。")],
        obs=("{N} does {sport} several mornings a week.", "{N}每周有几个早上去{sport}。"),
        single=[("What sport does {N} do in the mornings?", "{N}早上做什么运动？")],
        para=[("How do they keep fit before the office?", "上班前靠什么锻炼身体？")],
        when=[],
    ),
    "food_pref": dict(
        cat="hobby", type="PREFERENCE", event=False,
        slots={"dish": [("spicy Sichuan hotpot", "麻辣火锅"), ("Neapolitan pizza", "那不勒斯披萨"),
                        ("Vietnamese pho", "越南河粉"), ("dim sum", "广式早茶点心")]},
        say=[("Honestly nothing beats {dish}, I could eat it every single day.",
              "说实话没有什么比得上{dish}，我可以天天吃。"),
             ("If you ever want to cheer me up, just take me out for {dish}.",
              "想哄我开心的话，带我去吃{dish}就行。")],
        obs=("{N}'s favourite food is {dish}.", "{N}最爱吃{dish}。"),
        single=[("What is {N}'s favourite food?", "{N}最喜欢吃什么？")],
        para=[("Which meal would be the best treat for them?", "请客的话哪道菜最能讨好？")],
        when=[],
    ),
    "car": dict(
        cat="purchase", type="EPISODE", event=True,
        slots={"car": [("a second-hand red Mini", "一辆二手红色Mini"), ("an electric van", "一辆电动面包车"),
                       ("a vintage Vespa", "一辆老式韦士柏摩托")]},
        say=[("I finally bought {car}, no more crowded buses for me.", "我终于买了{car}，再也不用挤公交了。"),
             ("Picked up {car} from the dealer this morning, it smells brand new inside.",
              "今天上午去提了{car}，里面还有新车的味道。")],
        obs=("{N} bought {car}.", "{N}买了{car}。"),
        single=[("What vehicle did {N} buy?", "{N}买了什么交通工具？")],
        para=[("How do they get around town now instead of public transport?", "如今出行靠什么代步？")],
        when=[("When did {N} buy {car}?", "{N}是什么时候买的{car}？")],
    ),
    "exam": dict(
        cat="work", type="EPISODE", event=True,
        slots={"exam": [("driving test", "驾照考试"), ("accounting exam", "会计资格考试"), ("JLPT N2", "日语二级考试"),
                        ("marathon qualifier", "马拉松资格赛")]},
        say=[("I passed my {exam}! Third time lucky.", "我{exam}过了！第三次终于成功。"),
             ("Results came out this morning, I passed the {exam}.", "今天早上出成绩了，{exam}我通过了。")],
        obs=("{N} passed the {exam}.", "{N}通过了{exam}。"),
        single=[("Which test did {N} pass?", "{N}通过了什么考试？")],
        para=[("Any good news about results after several attempts?", "屡败屡战之后终于成功的是哪一项？")],
        when=[("When did {N} pass the {exam}?", "{N}什么时候通过{exam}的？")],
    ),
    "book": dict(
        cat="hobby", type="PREFERENCE", event=False,
        slots={"book": [("The Three-Body Problem", "三体"), ("Middlemarch", "米德尔马契"), ("One Hundred Years of Solitude", "百年孤独"),
                        ("Dune", "沙丘")]},
        say=[("I'm rereading {book}, it's even better the second time.", "我在重读《{book}》，第二遍更好看。"),
             ("Have you read {book}? I stayed up until two finishing it.", "你看过《{book}》吗？我熬到两点才看完。")],
        obs=("{N} loves the novel {book}.", "{N}很喜欢小说《{book}》。"),
        single=[("Which novel has {N} been reading?", "{N}最近在看哪本小说？")],
        para=[("What story kept them up late?", "哪部作品让人熬夜追读？")],
        when=[],
    ),
    "volunteer": dict(
        cat="hobby", type="EPISODE", event=True,
        slots={"place": [("an animal shelter", "动物收容所"), ("a food bank", "食物银行"), ("a community garden", "社区菜园")]},
        say=[("Spent Saturday volunteering at {place}, exhausting but so worth it.",
              "周六去{place}做了一天志愿者，很累但很值。"),
             ("I've started helping out at {place} on weekends.", "我开始周末去{place}帮忙了。")],
        obs=("{N} volunteers at {place}.", "{N}在{place}做志愿者。"),
        single=[("Where does {N} volunteer?", "{N}在哪里做志愿者？")],
        para=[("Do they give unpaid help to any charity?", "有没有参与什么公益活动？")],
        when=[("When did {N} volunteer at {place}?", "{N}什么时候去{place}做的志愿者？")],
    ),
}

# Changes of mind: the first plan (one session), then the change (a later session).
CHANGES = {
    "language": dict(
        cat="hobby", type="PREFERENCE",
        slots={"lang1": [("Spanish", "西班牙语"), ("French", "法语")], "lang2": [("Japanese", "日语"), ("Korean", "韩语")]},
        first=[("I've decided to learn {lang1} this year, I bought the textbooks already.",
                "我决定今年学{lang1}，课本都买好了。")],
        then=[("Okay, confession: I dropped {lang1}. I'm doing {lang2} now, it just clicks better.",
               "坦白一下：{lang1}我放弃了，现在改学{lang2}，感觉更适合我。")],
        obs1=("{N} planned to learn {lang1}.", "{N}打算学{lang1}。"),
        obs2=("{N} gave up {lang1} and is learning {lang2} instead.", "{N}放弃了{lang1}，改学{lang2}。"),
        now=[("Which language is {N} learning now?", "{N}现在在学哪门语言？")],
        before=[("Which language did {N} first plan to learn?", "{N}最初打算学哪门语言？")],
        para=[("What foreign tongue is being studied these days?", "如今在攻读哪种外文？")],
    ),
    "diet": dict(
        cat="health", type="PREFERENCE",
        slots={"x": [("vegetarian", "吃素")]},
        first=[("I'm going fully vegetarian from now on, no more meat for me.", "从现在起我要彻底吃素，不吃肉了。")],
        then=[("I lasted four months without meat, but I'm back to eating chicken and fish now.",
               "我坚持了四个月没吃肉，不过现在又开始吃鸡肉和鱼了。")],
        obs1=("{N} became vegetarian.", "{N}开始吃素。"),
        obs2=("{N} stopped being vegetarian and eats chicken and fish again.", "{N}不再吃素，又开始吃鸡肉和鱼。"),
        now=[("Does {N} still avoid meat?", "{N}现在还吃素吗？")],
        before=[("What diet did {N} try earlier?", "{N}之前尝试过什么饮食方式？")],
        para=[("Is poultry back on their plate?", "如今餐桌上又见荤腥了吗？")],
    ),
    "gym": dict(
        cat="health", type="PREFERENCE",
        slots={"x": [("gym", "健身房")]},
        first=[("I signed a one-year gym membership, I'm going to lift every day.", "我办了一年的健身卡，打算天天去撸铁。")],
        then=[("I cancelled the gym thing. Running outside in the park suits me much better.",
               "健身卡我退掉了，还是在公园跑步更适合我。")],
        obs1=("{N} joined a gym for a year.", "{N}办了一年的健身卡。"),
        obs2=("{N} cancelled the gym membership and runs in the park instead.", "{N}退了健身卡，改在公园跑步。"),
        now=[("How does {N} exercise now?", "{N}现在怎么锻炼？")],
        before=[("What did {N} sign up for before switching to running?", "{N}改跑步之前办了什么？")],
        para=[("Where do they jog lately?", "最近在哪儿慢跑？")],
    ),
    "house": dict(
        cat="home", type="PREFERENCE",
        slots={"x": [("flat", "公寓")]},
        first=[("We're saving up to buy a flat in the city centre.", "我们在攒钱，想在市中心买套公寓。")],
        then=[("Change of plans: we'd rather buy a small house in the suburbs, with a garden for the kids.",
               "计划变了：我们更想在郊区买个带花园的小房子，孩子有地方玩。")],
        obs1=("{N} wanted to buy a flat in the city centre.", "{N}想在市中心买公寓。"),
        obs2=("{N} now wants a small house with a garden in the suburbs instead of a central flat.",
              "{N}改主意了，想在郊区买带花园的小房子。"),
        now=[("What kind of home does {N} want to buy now?", "{N}现在想买什么样的房子？")],
        before=[("Where did {N} originally want to buy a flat?", "{N}原来想在哪里买公寓？")],
        para=[("Are they still hoping for a downtown apartment?", "还打算住到闹区去吗？")],
    ),
}

SMALL_TALK = [
    ("Hey! How has your week been?", "嘿！这周过得怎么样？"),
    ("Long time no chat, what's new?", "好久没聊了，最近有什么新鲜事？"),
    ("Haha, that sounds about right.", "哈哈，确实是这样。"),
    ("Oh wow, I did not see that coming.", "哇，真没想到。"),
    ("That's amazing, congratulations!", "太棒了，恭喜恭喜！"),
    ("Oh no, I'm so sorry to hear that. Take care of yourself.", "啊，听到这个真难过，好好照顾自己。"),
    ("Send me pictures please!", "一定要给我发照片！"),
    ("I'm a bit tired today, work was hectic.", "我今天有点累，工作忙死了。"),
    ("The weather here has been awful all week.", "这边一整周天气都很糟糕。"),
    ("I watched a documentary about octopuses last night, fascinating stuff.", "我昨晚看了一部关于章鱼的纪录片，很有意思。"),
    ("We should grab coffee when things calm down.", "等忙完这阵子我们约个咖啡吧。"),
    ("Talk soon, I have to run!", "回头聊，我得先走了！"),
    ("Good night, sleep well.", "晚安，睡个好觉。"),
    ("How is everyone at home?", "家里人都还好吗？"),
    ("I keep forgetting to water my plants.", "我老是忘记给植物浇水。"),
    ("Did you see the match on Sunday? What a finish.", "你看周日的比赛了吗？结尾太精彩了。"),
    ("My internet has been dropping out all day.", "我家网络一整天断断续续的。"),
    ("That makes total sense to me.", "我完全能理解。"),
    ("Really? Tell me more!", "真的吗？快多说说！"),
    ("I'm proud of you, seriously.", "说真的，我为你骄傲。"),
    ("My manager scheduled three meetings back to back again.", "我经理又连着安排了三个会。"),
    ("We tried that new ramen place near the station, it was just okay.", "我们去车站旁边那家新开的拉面店吃了，一般般。"),
    ("My parents are visiting next weekend, the flat is a mess.", "我爸妈下周末要来，家里乱成一团。"),
    ("I need a holiday so badly.", "我太需要放个假了。"),
    ("The train was delayed for an hour this morning.", "今天早上火车晚点了一个小时。"),
    ("I finally fixed the leaking tap in the kitchen.", "我终于把厨房漏水的水龙头修好了。"),
    ("Any good series to recommend? I finished everything.", "有什么好看的剧推荐吗？我全看完了。"),
    ("It's my friend's birthday tomorrow and I still have no present.", "明天是我朋友生日，我还没准备礼物。"),
    ("I've been drinking way too much coffee lately.", "我最近咖啡喝得太多了。"),
    ("Running late, let's talk tonight.", "我要迟到了，晚上再聊。"),
    # Near misses: the topics of the facts, said of someone else or only wished for.
    ("My cousin keeps talking about a trip to Japan, but she never books anything.", "我表姐天天说要去日本玩，可从来不订票。"),
    ("Our neighbours' dog barked all night again.", "邻居家的狗又叫了一整晚。"),
    ("Sometimes I think about changing jobs, but not yet.", "有时候我也想换工作，不过还没到时候。"),
    ("The couple downstairs moved out last week.", "楼下那对夫妻上周搬走了。"),
    ("A colleague of mine is learning the guitar and practises at lunch.", "我一个同事在学吉他，午休的时候练。"),
    ("My dad wants to buy a car but keeps changing his mind about the colour.", "我爸想买车，可是颜色一直定不下来。"),
    ("My gym buddy hurt his back last month.", "我健身的朋友上个月把腰扭了。"),
    ("I went to a friend's wedding years ago where it rained the whole time.", "几年前我参加过一个朋友的婚礼，下了一整天雨。"),
]
# What an extraction keeps of a filler turn that says something (third person, {N} the speaker).
FILLER_OBSERVATIONS = {
    "I'm a bit tired today, work was hectic.": ("{N} had a hectic day at work.", "{N}那天工作很忙很累。"),
    "The weather here has been awful all week.": ("The weather where {N} lives was bad for a week.", "{N}那边一整周天气都很差。"),
    "I watched a documentary about octopuses last night, fascinating stuff.": (
        "{N} watched a documentary about octopuses.", "{N}看了一部关于章鱼的纪录片。"),
    "I keep forgetting to water my plants.": ("{N} often forgets to water the plants.", "{N}经常忘记给植物浇水。"),
    "Did you see the match on Sunday? What a finish.": ("{N} watched the Sunday match.", "{N}看了周日的比赛。"),
    "My internet has been dropping out all day.": ("{N}'s internet connection was unreliable.", "{N}家的网络不稳定。"),
    "My manager scheduled three meetings back to back again.": (
        "{N}'s manager schedules many meetings.", "{N}的经理经常连着安排会议。"),
    "We tried that new ramen place near the station, it was just okay.": (
        "{N} found the new ramen place near the station average.", "{N}觉得车站旁新开的拉面店一般。"),
    "My parents are visiting next weekend, the flat is a mess.": (
        "{N}'s parents visited for a weekend.", "{N}的父母来家里住了一个周末。"),
    "The train was delayed for an hour this morning.": ("{N}'s train was delayed by an hour.", "{N}坐的火车晚点了一小时。"),
    "I finally fixed the leaking tap in the kitchen.": ("{N} fixed the kitchen tap.", "{N}修好了厨房的水龙头。"),
    "It's my friend's birthday tomorrow and I still have no present.": (
        "{N} needed a birthday present for a friend.", "{N}需要给朋友准备生日礼物。"),
    "I've been drinking way too much coffee lately.": ("{N} drinks a lot of coffee.", "{N}咖啡喝得很多。"),
    "My cousin keeps talking about a trip to Japan, but she never books anything.": (
        "{N}'s cousin talks about visiting Japan.", "{N}的表姐一直说要去日本。"),
    "Our neighbours' dog barked all night again.": ("{N}'s neighbours have a noisy dog.", "{N}的邻居家有条爱叫的狗。"),
    "Sometimes I think about changing jobs, but not yet.": (
        "{N} sometimes considers changing jobs.", "{N}有时会考虑换工作。"),
    "The couple downstairs moved out last week.": ("{N}'s downstairs neighbours moved out.", "{N}楼下的邻居搬走了。"),
    "A colleague of mine is learning the guitar and practises at lunch.": (
        "{N} has a colleague who is learning the guitar.", "{N}的同事在学吉他。"),
    "My dad wants to buy a car but keeps changing his mind about the colour.": (
        "{N}'s father wants to buy a car.", "{N}的父亲想买车。"),
    "My gym buddy hurt his back last month.": ("{N}'s gym friend hurt his back.", "{N}健身的朋友扭伤了腰。"),
    "I went to a friend's wedding years ago where it rained the whole time.": (
        "{N} once went to a rainy wedding of a friend.", "{N}参加过一个下雨的朋友婚礼。"),
}

# (en speaker, zh speaker) names and pronouns; language: en, zh or mixed (first speaker zh, second en).
CONVERSATIONS = [
    ("en", ("Maya", "she"), ("Tom", "he")),
    ("zh", ("李娜", "she"), ("王磊", "he")),
    ("mixed", ("陈晓雨", "she"), ("Daniel", "he")),
    ("en", ("Priya", "she"), ("Marcus", "he")),
    ("zh", ("张伟", "he"), ("刘芳", "she")),
    ("mixed", ("赵明", "he"), ("Sophie", "she")),
    ("en", ("Elena", "she"), ("Kenji", "he")),
    ("zh", ("周婷", "she"), ("孙浩", "he")),
    ("en", ("Oliver", "he"), ("Grace", "she")),
    ("mixed", ("林静", "she"), ("Lucas", "he")),
    ("zh", ("吴昊", "he"), ("郑雪", "she")),
    ("en", ("Hannah", "she"), ("Samuel", "he")),
]

MONTHS_EN = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
             "October", "November", "December"]


def _fill(text: str, values: dict, lang: str, name: str, pronoun: str) -> str:
    i = 0 if lang == "en" else 1
    out = text.replace("{N}", name)
    out = out.replace("{Pp}", "his" if pronoun == "he" else "her").replace("{P}", pronoun)
    out = out.replace("{Pz}", "他" if pronoun == "he" else "她")
    for key, pair in values.items():
        out = out.replace("{" + key + "}", pair[i])
    return out


# The set's own meaning of "a word" (fixed when it was written, so that the file does not change with
# the search's tokens): lower-cased words of letters and digits without bm25s's English stop words, and
# the character bigrams of CJK runs (a lone character is its own token).
_CJK = "\u2e80-\u2fdf\u3040-\u30ff\u3100-\u312f\u3190-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_TOKEN = re.compile(f"[{_CJK}]+|(?:(?![{_CJK}])\\w)+")
_CJK_RUN = re.compile(f"[{_CJK}]")


def set_tokens(text: str) -> list[str]:
    """The words of a text as this set counts them (see above)."""
    from bm25s.stopwords import STOPWORDS_EN_PLUS

    tokens: list[str] = []
    for run in _TOKEN.findall((text or "").lower()):
        if _CJK_RUN.match(run):
            tokens.extend([run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)])
        elif run not in STOPWORDS_EN_PLUS and run != "_":
            tokens.append(run)
    return tokens


def _tokens(text: str) -> set[str]:
    return set(set_tokens(text))


def build() -> dict:
    rng = random.Random(SEED)
    conversations, queries = [], []
    for number, (lang, first, second) in enumerate(CONVERSATIONS, start=1):
        cid = f"c{number:02d}"
        speakers = [first, second]
        speaker_lang = {first[0]: "zh" if lang in ("zh", "mixed") else "en",
                        second[0]: "zh" if lang == "zh" else "en"}
        start = dt.date(2022, rng.randint(9, 11), rng.randint(1, 25))
        # Sessions: SESSIONS dated sessions, 14-40 days apart (about a year, across two calendar years).
        dates = [start]
        for _ in range(SESSIONS - 1):
            dates.append(dates[-1] + dt.timedelta(days=rng.randint(14, 40)))
        # Facts for each speaker: distinct templates; one change of mind each.
        fact_keys = list(FACTS)
        rng.shuffle(fact_keys)
        change_keys = list(CHANGES)
        rng.shuffle(change_keys)
        plan = []  # (session index, speaker, kind, key, values)
        used_slots: set[str] = set()
        for s, (name, pronoun) in enumerate(speakers):
            keys = fact_keys[s * 8 : s * 8 + 8]
            for key in keys:
                values = {}
                for slot, options in FACTS[key]["slots"].items():
                    choices = [o for o in options if o[0] not in used_slots] or options
                    values[slot] = rng.choice(choices)
                    used_slots.add(values[slot][0])
                plan.append((rng.randrange(SESSIONS), s, "fact", key, values))
            ckey = change_keys[s]
            values = {slot: rng.choice(options) for slot, options in CHANGES[ckey]["slots"].items()}
            a = rng.randrange(0, 3)
            plan.append((a, s, "plan", ckey, values))
            plan.append((rng.randrange(a + 2, SESSIONS), s, "change", ckey, values))
        sessions, observations = [], []
        facts = []  # dicts: speaker index, key, kind, turn id, date, values, obs id
        turn_number = 0

        def new_turn(session_turns, speaker_index, text, date):
            nonlocal turn_number
            turn_number += 1
            tid = f"{cid}-t{turn_number:03d}"
            session_turns.append({"id": tid, "speaker": speakers[speaker_index][0], "text": text})
            return tid

        def filler(session_turns, speaker_index, pair, date):
            """A small-talk turn; an observation too when it says something about the speaker."""
            name, pronoun = speakers[speaker_index]
            sl = speaker_lang[name]
            tid = new_turn(session_turns, speaker_index, pair[0 if sl == "en" else 1], date)
            if pair[0] in FILLER_OBSERVATIONS:
                text = _fill(FILLER_OBSERVATIONS[pair[0]][0 if sl == "en" else 1], {}, sl, name, pronoun)
                observations.append({"id": f"{cid}-o{len(observations) + 1:03d}", "content": text,
                                     "type": "EPISODE", "lang": sl, "validFrom": date.isoformat(), "evidence": [tid]})

        for si, date in enumerate(dates):
            turns: list[dict] = []
            opener = rng.randrange(2)
            talk = rng.sample(SMALL_TALK, 16)
            t = talk.pop()
            filler(turns, opener, t, date)
            todays = [p for p in plan if p[0] == si]
            rng.shuffle(todays)
            for _si, s, kind, key, values in todays:
                name, pronoun = speakers[s]
                sl = speaker_lang[name]
                template = FACTS[key] if kind == "fact" else CHANGES[key]
                phrasings = template["say"] if kind == "fact" else template["first" if kind == "plan" else "then"]
                phrase = rng.choice(phrasings)
                if rng.random() < 0.5 and talk:  # a question or remark before the news
                    aside = talk.pop()
                    filler(turns, 1 - s, aside, date)
                tid = new_turn(turns, s, _fill(phrase[0 if sl == "en" else 1], values, sl, name, pronoun), date)
                other = 1 - s
                if rng.random() < 0.8 and talk:
                    reply = talk.pop()
                    filler(turns, other, reply, date)
                obs_key = "obs" if kind == "fact" else ("obs1" if kind == "plan" else "obs2")
                oid = f"{cid}-o{len(observations) + 1:03d}"
                obs_text = _fill(template[obs_key][0 if sl == "en" else 1], values, sl, name, pronoun)
                observations.append({"id": oid, "content": obs_text, "type": template["type"],
                                     "lang": sl, "validFrom": date.isoformat(), "evidence": [tid]})
                facts.append({"speaker": s, "key": key, "kind": kind, "turn": tid, "obs": oid, "date": date,
                              "values": values, "event": kind == "fact" and template.get("event", False)})
            if talk:
                closing = talk.pop()
                filler(turns, 1 - opener, closing, date)
            sessions.append({"date": date.isoformat(), "turns": turns})
        conversations.append({"id": cid, "language": lang, "speakers": [s[0] for s in speakers],
                              "sessions": sessions, "observations": observations})
        asked = dates[-1] + dt.timedelta(days=10)
        queries.extend(_questions(rng, cid, speakers, speaker_lang, facts, dates, asked, conversations[-1]))
    return {"conversations": conversations, "queries": queries}


def _question_lang(rng, lang: str, speaker_lang: str) -> str:
    """Mostly the speaker's language; in mixed conversations a third of the questions cross over."""
    if lang == "mixed" and rng.random() < 0.35:
        return "en" if speaker_lang == "zh" else "zh"
    return speaker_lang


def _questions(rng, cid, speakers, speaker_lang, facts, dates, asked, conversation):
    lang = conversation["language"]
    texts = {t["id"]: t["text"] for s in conversation["sessions"] for t in s["turns"]}
    speaker_of = {t["id"]: t["speaker"] for s in conversation["sessions"] for t in s["turns"]}
    obs_text = {o["id"]: o["content"] for o in conversation["observations"]}
    out = []

    def add(text, kind, ql, evidence, asked_at=asked):
        out.append({"conversation": cid, "query": text, "kind": kind, "lang": ql, "evidence": sorted(evidence),
                    "asked_at": asked_at.isoformat()})

    def no_shared_word(text, turn_ids, obs_ids):
        words = _tokens(text)
        other = set()
        for tid in turn_ids:
            other |= _tokens(f"{speaker_of[tid]}: {texts[tid]}")
        for oid in obs_ids:
            other |= _tokens(obs_text[oid])
        return not (words & other)

    for fact in facts:
        name, pronoun = speakers[fact["speaker"]]
        sl = speaker_lang[name]
        template = FACTS[fact["key"]] if fact["kind"] == "fact" else CHANGES[fact["key"]]
        values = fact["values"]
        if fact["kind"] == "fact":
            for q in template["single"]:
                ql = _question_lang(rng, lang, sl)
                add(_fill(q[0 if ql == "en" else 1], values, ql, name, pronoun), "single", ql, [fact["turn"]])
            for q in template["para"]:
                ql = sl
                text = _fill(q[0 if ql == "en" else 1], values, ql, name, pronoun)
                if no_shared_word(text, [fact["turn"]], [fact["obs"]]):
                    add(text, "paraphrase", ql, [fact["turn"]])
            for q in template["when"]:
                ql = _question_lang(rng, lang, sl)
                add(_fill(q[0 if ql == "en" else 1], values, ql, name, pronoun), "time", ql, [fact["turn"]])
        elif fact["kind"] == "change":
            plan = next(f for f in facts if f["kind"] == "plan" and f["key"] == fact["key"] and f["speaker"] == fact["speaker"])
            for q in template["now"]:
                ql = _question_lang(rng, lang, sl)
                add(_fill(q[0 if ql == "en" else 1], values, ql, name, pronoun), "single", ql, [fact["turn"]])
            for q in template["before"]:
                ql = _question_lang(rng, lang, sl)
                add(_fill(q[0 if ql == "en" else 1], values, ql, name, pronoun), "single", ql, [plan["turn"]])
            for q in template["para"]:
                text = _fill(q[0 if sl == "en" else 1], values, sl, name, pronoun)
                if no_shared_word(text, [fact["turn"]], [fact["obs"]]):
                    add(text, "paraphrase", sl, [fact["turn"]])
            ql = _question_lang(rng, lang, sl)
            add(_change_multi(template, values, ql, name, pronoun), "multi", ql, [plan["turn"], fact["turn"]])
    # Several facts: a speaker's facts of one category (two or more).
    for s, (name, pronoun) in enumerate(speakers):
        sl = speaker_lang[name]
        by_cat: dict[str, list] = {}
        for fact in facts:
            if fact["speaker"] == s and fact["kind"] in ("fact", "change"):
                cat = (FACTS if fact["kind"] == "fact" else CHANGES)[fact["key"]]["cat"]
                by_cat.setdefault(cat, []).append(fact["turn"])
        for cat, turns in sorted(by_cat.items()):
            if len(turns) >= 2:
                for q in MULTI[cat]:
                    ql = _question_lang(rng, lang, sl)
                    add(_fill(q[0 if ql == "en" else 1], {}, ql, name, pronoun), "multi", ql, turns)
        # Two facts of different categories in one question.
        singles = [f for f in facts if f["speaker"] == s and f["kind"] == "fact" and FACTS[f["key"]].get("pair")]
        if len(singles) >= 2:
            a, b = rng.sample(singles, 2)
            ql = _question_lang(rng, lang, sl)
            pa, pb = FACTS[a["key"]]["pair"], FACTS[b["key"]]["pair"]
            text = (f"{_fill(pa[0], a['values'], 'en', name, pronoun)} And {_fill(pb[0], b['values'], 'en', name, pronoun)[0].lower()}"
                    f"{_fill(pb[0], b['values'], 'en', name, pronoun)[1:]}") if ql == "en" else (
                _fill(pa[1], a["values"], "zh", name, pronoun) + "另外，" + _fill(pb[1], b["values"], "zh", name, pronoun))
            add(text, "multi", ql, [a["turn"], b["turn"]])
    # Time: a month, a year, last month / 上个月, before / after a move.
    for s, (name, pronoun) in enumerate(speakers):
        sl = speaker_lang[name]
        events = [f for f in facts if f["speaker"] == s and f["event"]]
        months = sorted({(f["date"].year, f["date"].month) for f in events})
        for year, month in months:
            evidence = [f["turn"] for f in events if (f["date"].year, f["date"].month) == (year, month)]
            ql = _question_lang(rng, lang, sl)
            en = rng.choice([f"What did {name} do in {MONTHS_EN[month - 1]} {year}?",
                             f"What happened in {name}'s life in {MONTHS_EN[month - 1]} {year}?",
                             f"What was {name} up to in {MONTHS_EN[month - 1]} {year}?"])
            zh = rng.choice([f"{name}{year}年{month}月做了什么？", f"{year}年{month}月{name}身上发生了什么事？",
                             f"{name}在{year}年{month}月忙些什么？"])
            add(en if ql == "en" else zh, "time", ql, evidence)
            # Asked in the following month: "last month".
            following = (dt.date(year, month, 28) + dt.timedelta(days=rng.randint(5, 20)))
            ql = _question_lang(rng, lang, sl)
            en = rng.choice([f"What did {name} do last month?", f"What was new with {name} last month?"])
            zh = rng.choice([f"{name}上个月做了什么？", f"{name}上个月有什么新鲜事？"])
            add(en if ql == "en" else zh, "time", ql, evidence, asked_at=following)
        years = sorted({f["date"].year for f in events})
        for year in years:
            evidence = [f["turn"] for f in events if f["date"].year == year]
            ql = _question_lang(rng, lang, sl)
            add(f"What did {name} do in {year}?" if ql == "en" else f"{name}{year}年做了哪些事？", "time", ql, evidence)
        if len(years) == 2:
            ql = _question_lang(rng, lang, sl)
            evidence = [f["turn"] for f in events if f["date"].year == years[0]]
            add(f"What did {name} do last year?" if ql == "en" else f"{name}去年都做了什么？", "time", ql, evidence,
                asked_at=dt.date(years[1], rng.randint(6, 10), 15))
        move = next((f for f in events if f["key"] == "move"), None)
        if move is not None:
            before = [f["turn"] for f in events if f["date"] < move["date"]]
            after = [f["turn"] for f in events if f["date"] > move["date"]]
            if before:
                ql = _question_lang(rng, lang, sl)
                add(f"What did {name} do before {pronoun} moved?" if ql == "en" else f"{name}搬家之前做了什么？",
                    "time", ql, before)
            if after:
                ql = _question_lang(rng, lang, sl)
                add(f"What has {name} done since {pronoun} moved?" if ql == "en" else f"{name}搬家以后做了什么？",
                    "time", ql, after)
    return out


MULTI = {
    "travel": [("Where has {N} travelled?", "{N}都去过哪些地方旅行？")],
    "work": [("What has been going on in {N}'s career?", "{N}的工作上有哪些变化？")],
    "home": [("What changed at {N}'s home?", "{N}家里有什么变化？")],
    "family": [("What family news did {N} share?", "{N}分享了哪些家里的消息？")],
    "health": [("What health matters did {N} mention?", "{N}提到过哪些健康方面的事？")],
    "hobby": [("What does {N} do in {Pp} free time?", "{N}业余时间都做些什么？")],
    "purchase": [("What did {N} buy?", "{N}买了什么？")],
}
for _key, _pair in {
    "pet": ("What is {N}'s pet called?", "{N}的宠物叫什么？"),
    "job_new": ("Where does {N} work?", "{N}在哪儿上班？"),
    "allergy": ("What can't {N} eat?", "{N}不能吃什么？"),
    "hobby_sport": ("Which sport does {N} do?", "{N}做什么运动？"),
    "food_pref": ("What food does {N} love?", "{N}爱吃什么？"),
    "move": ("Which city did {N} move to?", "{N}搬去了哪个城市？"),
    "hobby_instrument": ("What instrument does {N} play?", "{N}在学什么乐器？"),
    "book": ("Which book does {N} love?", "{N}喜欢哪本书？"),
}.items():
    FACTS[_key]["pair"] = _pair


def _change_multi(template, values, ql, name, pronoun) -> str:
    before = template["before"][0]
    if ql == "en":
        return (f"{_fill(before[0], values, 'en', name, pronoun)} And what about now?")
    return _fill(before[1], values, "zh", name, pronoun) + "现在呢？"


def _split(data: dict) -> None:
    """Fixed split by conversation: odd conversations dev, even test (c01 dev, c02 test, ...)."""
    for conversation in data["conversations"]:
        conversation["split"] = "dev" if int(conversation["id"][1:]) % 2 else "test"
    splits = {c["id"]: c["split"] for c in data["conversations"]}
    for query in data["queries"]:
        query["split"] = splits[query["conversation"]]


def main() -> None:
    data = build()
    _split(data)
    data = {"description": __doc__.strip().splitlines()[0], **data}
    OUT.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    kinds: dict[str, int] = {}
    for q in data["queries"]:
        kinds[q["kind"]] = kinds.get(q["kind"], 0) + 1
    turns = sum(len(s["turns"]) for c in data["conversations"] for s in c["sessions"])
    print(f"{len(data['conversations'])} conversations, {turns} turns, {len(data['queries'])} queries: {kinds}")


if __name__ == "__main__":
    main()
