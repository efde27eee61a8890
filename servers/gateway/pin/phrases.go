package pin

// hiddenPhrases address the model rather than describe a tool. They are
// matched in normalized text (see normalize): lower case, one space.
var hiddenPhrases = []string{
	"ignore previous", "ignore all previous", "ignore the previous", "ignore prior", "ignore any previous",
	"ignore your instructions", "ignore all instructions", "ignore the above", "disregard previous",
	"disregard all", "disregard the above", "disregard your", "forget previous", "forget all previous",
	"forget your instructions", "override your instructions", "new instructions", "updated instructions",
	"do not tell the user", "don't tell the user", "do not tell user", "do not mention", "don't mention",
	"do not inform the user", "do not reveal", "don't reveal", "do not disclose", "without telling the user",
	"without informing the user", "without the user knowing", "the user must not", "user should not know",
	"not visible to the user", "hide this from the user", "keep this secret", "this is very important",
	"you must always", "you must first", "before using this tool", "before calling this tool",
	"before using any", "before calling any", "instead of calling", "always call", "must be called before",
	"you are now", "act as", "system prompt", "developer mode", "jailbreak",
	"[inst]", "<<sys>>", "<|im_start|>", "<|system|>",
}

// exfilPhrases speak of secrets or of sending data out.
var exfilPhrases = []string{
	"~/.ssh", "id_rsa", "id_ed25519", ".ssh/", "~/.aws", ".aws/credentials", "~/.config", "~/.cursor",
	"mcp.json", ".env", "private key", "api key", "apikey", "access token", "password", "passwd",
	"credentials", "secret key", "sidenote", "side note", "base64", "curl ", "wget ", "webhook",
	"exfiltrat", "send the contents", "send its contents", "upload the", "post the contents",
	"conversation history", "chat history", "previous messages",
}

// promptTags are names of tags that imitate a prompt's structure.
var promptTags = map[string]bool{
	"important": true, "system": true, "sys": true, "instructions": true, "instruction": true,
	"admin": true, "secret": true, "hidden": true, "assistant": true, "user": true, "prompt": true,
	"im_start": true, "im_end": true, "context": true, "note": true, "critical": true,
	"system-prompt": true, "system_prompt": true, "tool_call": true, "function_call": true,
}
