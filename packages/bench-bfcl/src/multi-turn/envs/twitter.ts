import { iterate, operator, pyEquals, PyHashDict, pyInt, type PyObject, pyStr, truthy } from "@envace/python-text";
import { StateEnvironment } from "../environment.js";
import { asDict, asList, asStr, dictGet } from "../python-access.js";

const DEFAULT_STATE = (): PyHashDict =>
  PyHashDict.of({
    username: "john",
    password: "john123",
    authenticated: false,
    tweets: new PyHashDict(),
    comments: new PyHashDict(),
    retweets: new PyHashDict(),
    following_list: ["alice", "bob"],
    tweet_counter: 0n,
  });

const KEYS = ["username", "password", "authenticated", "tweets", "comments", "retweets", "following_list", "tweet_counter"];

/** Posting, retweeting, commenting and following (upstream `TwitterAPI`). */
export class TwitterAPI extends StateEnvironment {
  readonly className = "TwitterAPI";

  override load(config: PyHashDict): void {
    this.loadState(config, KEYS, DEFAULT_STATE());
    // Scenario files key tweets by strings; upstream turns them into ints.
    const tweets = asDict(this.state.get("tweets")!, "items");
    this.state.set("tweets", new PyHashDict([...tweets].map(([k, v]) => [pyInt(k), v])));
  }

  private authenticated(): boolean {
    return truthy(this.get("authenticated"));
  }

  constructor(...args: ConstructorParameters<typeof StateEnvironment>) {
    super(...args);
    this.define("authenticate_twitter", ["username", "password"], (username, password) => {
      if (pyEquals(username, this.get("username")) && pyEquals(password, this.get("password"))) {
        this.state.set("authenticated", true);
        return PyHashDict.of({ authentication_status: true });
      }
      return PyHashDict.of({ authentication_status: false });
    });
    this.define("posting_get_login_status", [], () => PyHashDict.of({ login_status: this.authenticated() }));
    this.define("post_tweet", ["content", { name: "tags", default: [] }, { name: "mentions", default: [] }], (content, tags, mentions) => {
      if (!this.authenticated()) return PyHashDict.of({ error: "User not authenticated. Please authenticate before posting." });
      const counter = this.get("tweet_counter");
      const tweet = PyHashDict.of({ id: counter, username: this.get("username"), content, tags, mentions });
      operator.setitem(this.get("tweets"), counter, tweet);
      this.state.set("tweet_counter", operator.add(counter, 1n));
      return tweet;
    });
    this.define("retweet", ["tweet_id"], (tweetId) => {
      if (!this.authenticated()) return PyHashDict.of({ error: "User not authenticated. Please authenticate before retweeting." });
      if (!operator.contains(this.get("tweets"), tweetId)) return PyHashDict.of({ error: `Tweet with ID ${pyStr(tweetId)} not found.` });
      const retweets = this.get("retweets");
      const username = this.get("username");
      if (!operator.contains(retweets, username)) operator.setitem(retweets, username, []);
      const mine = operator.getitem(retweets, username);
      if (operator.contains(mine, tweetId)) return PyHashDict.of({ retweet_status: "Already retweeted" });
      asList(mine, "append").push(tweetId);
      return PyHashDict.of({ retweet_status: "Successfully retweeted" });
    });
    this.define("comment", ["tweet_id", "comment_content"], (tweetId, content) => {
      if (!this.authenticated()) return PyHashDict.of({ error: "User not authenticated. Please authenticate before commenting." });
      if (!operator.contains(this.get("tweets"), tweetId)) return PyHashDict.of({ error: `Tweet with ID ${pyStr(tweetId)} not found.` });
      const comments = this.get("comments");
      if (!operator.contains(comments, tweetId)) operator.setitem(comments, tweetId, []);
      asList(operator.getitem(comments, tweetId), "append").push(PyHashDict.of({ username: this.get("username"), content }));
      return PyHashDict.of({ comment_status: "Comment added successfully" });
    });
    this.define("mention", ["tweet_id", "mentioned_usernames"], (tweetId, usernames) => {
      if (!operator.contains(this.get("tweets"), tweetId)) return PyHashDict.of({ error: `Tweet with ID ${pyStr(tweetId)} not found.` });
      const tweet = operator.getitem(this.get("tweets"), tweetId);
      asList(operator.getitem(tweet, "mentions"), "extend").push(...iterate(usernames));
      return PyHashDict.of({ mention_status: "Users mentioned successfully" });
    });
    this.define("follow_user", ["username_to_follow"], (username) => {
      if (!this.authenticated()) return PyHashDict.of({ error: "User not authenticated. Please authenticate before following." });
      const following = this.get("following_list");
      if (operator.contains(following, username)) return PyHashDict.of({ follow_status: false });
      asList(following, "append").push(username);
      return PyHashDict.of({ follow_status: true });
    });
    this.define("list_all_following", [], () => {
      if (!this.authenticated()) return PyHashDict.of({ error: "User not authenticated. Please authenticate before listing following." });
      return PyHashDict.of({ following_list: this.get("following_list") });
    });
    this.define("unfollow_user", ["username_to_unfollow"], (username) => {
      if (!this.authenticated()) return PyHashDict.of({ error: "User not authenticated. Please authenticate before unfollowing." });
      const following = this.get("following_list");
      if (!operator.contains(following, username)) return PyHashDict.of({ unfollow_status: false });
      const list = asList(following, "remove");
      list.splice(
        list.findIndex((u) => pyEquals(u, username)),
        1,
      );
      return PyHashDict.of({ unfollow_status: true });
    });
    this.define("get_tweet", ["tweet_id"], (tweetId) => {
      if (!operator.contains(this.get("tweets"), tweetId)) return PyHashDict.of({ error: `Tweet with ID ${pyStr(tweetId)} not found.` });
      return operator.getitem(this.get("tweets"), tweetId);
    });
    this.define("get_user_tweets", ["username"], (username) => this.tweets().filter((tweet) => pyEquals(operator.getitem(tweet, "username"), username)));
    this.define("search_tweets", ["keyword"], (keyword) => {
      const needle = (): string => asStr(keyword, "lower").toLowerCase();
      return this.tweets().filter(
        (tweet) =>
          asStr(operator.getitem(tweet, "content"), "lower").toLowerCase().includes(needle()) ||
          iterate(operator.getitem(tweet, "tags"))
            .map((tag) => asStr(tag, "lower").toLowerCase())
            .includes(needle()),
      );
    });
    this.define("get_tweet_comments", ["tweet_id"], (tweetId) => {
      if (!operator.contains(this.get("tweets"), tweetId)) return PyHashDict.of({ error: `Tweet with ID ${pyStr(tweetId)} not found.` });
      return dictGet(this.get("comments"), tweetId, []);
    });
    this.define("get_user_stats", ["username"], (username) => {
      const tweetCount = this.tweets().filter((tweet) => pyEquals(operator.getitem(tweet, "username"), username)).length;
      const followingCount = pyEquals(username, this.get("username")) ? iterate(this.get("following_list")).length : 0;
      const retweetCount = iterate(dictGet(this.get("retweets"), username, [])).length;
      return PyHashDict.of({ tweet_count: BigInt(tweetCount), following_count: BigInt(followingCount), retweet_count: BigInt(retweetCount) });
    });
  }

  private tweets(): PyObject[] {
    return asDict(this.get("tweets"), "values").values();
  }
}
